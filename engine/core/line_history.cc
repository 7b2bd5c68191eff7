#include "engine/core/line_history.h"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

#include "engine/core/retention.h"

namespace oddsrelay {

namespace {

// Whether `rec` prices the line `key` (has it with at least one outcome).
// Lines usually keep their positions, so `hint` is tried before a scan.
bool priced_in(const feed::MarketRec& rec, std::string_view key, size_t hint) {
  if (hint < rec.lines.size() && rec.lines[hint].key == key) return rec.lines[hint].count > 0;
  for (const feed::LineIn& l : rec.lines)
    if (l.key == key) return l.count > 0;
  return false;
}

// priced_in() for many keys of one record: the record's keys as LineKeys
// (two-word compares, no memcmp) and a 256-bit filter of them, so that a
// history line the record does not have (nearly all of them) costs a hash
// and a bit test instead of a scan of the record. Same answers as
// priced_in(); a record with more lines, or a key longer than a LineKey
// holds, takes priced_in() itself.
class PricedIn {
 public:
  explicit PricedIn(const feed::MarketRec& rec) : rec_(rec) {}
  bool operator()(const LineKey& key, size_t hint) const {
    const auto& lines = rec_.lines;
    if (hint < lines.size() && lines[hint].key == key.view()) return lines[hint].count > 0;
    if (!built_) build();
    if (n_ > kMax) return priced_in(rec_, key.view(), hint);
    uint64_t w[2];
    std::memcpy(w, &key, sizeof w);
    const uint32_t b = bit(w);
    if (!(filter_[b >> 6] >> (b & 63) & 1)) return false;
    for (size_t i = 0; i < n_; ++i)
      if (((keys_[i][0] ^ w[0]) | (keys_[i][1] ^ w[1])) == 0) return priced_[i];
    return false;
  }

 private:
  static constexpr size_t kMax = 64;
  // A LineKey's two words (LineKey::operator==), hashed to one of 256 bits.
  static uint32_t bit(const uint64_t w[2]) {
    return static_cast<uint32_t>(((w[0] ^ (w[1] * 0x9e3779b97f4a7c15ULL)) * 0xbf58476d1ce4e5b9ULL) >> 56);
  }
  // Built at the first lookup that misses its hint: most records need none.
  void build() const {
    built_ = true;
    n_ = rec_.lines.size();
    if (n_ > kMax) return;
    for (size_t i = 0; i < n_; ++i) {
      const std::string& k = rec_.lines[i].key;
      if (k.size() > kMaxLineKey) {
        n_ = kMax + 1;
        return;
      }
      const LineKey key(k);
      std::memcpy(keys_[i], &key, sizeof keys_[i]);
      priced_[i] = rec_.lines[i].count > 0;
      const uint32_t b = bit(keys_[i]);
      filter_[b >> 6] |= uint64_t{1} << (b & 63);
    }
  }
  const feed::MarketRec& rec_;
  mutable bool built_ = false;
  mutable size_t n_ = 0;
  mutable uint64_t filter_[4] = {};
  mutable uint64_t keys_[kMax][2];  // left unset until build(): most records never need them
  mutable bool priced_[kMax];
};

// The history to change: this batch's own, or a fresh copy. Every
// LineHistory is created non-const right here, and readers only see it
// through LineHistoryPtr, so writing through the const_cast is sound.
LineHistory& writable(LineHistoryPtr& h, uint64_t edit) {
  if (!h || h->edit != edit) {
    auto fresh = h ? std::make_shared<LineHistory>(*h) : std::make_shared<LineHistory>();
    fresh->edit = edit;
    h = std::move(fresh);
  }
  return const_cast<LineHistory&>(*h);
}

// Makes history market `id` the lines `keep` of `old` followed by the lines
// `add` of `from` (newly withdrawn, as last read); no lines: it goes.
void replace_market(LineHistoryPtr& h, uint64_t edit, uint32_t id, const Market* old, const std::vector<uint32_t>& keep,
                    const Market* from, std::vector<uint32_t> add) {
  LineHistory& w = writable(h, edit);
  const uint32_t before = old ? static_cast<uint32_t>(old->lines.size()) : 0;
  const uint32_t others = w.lines - before;
  const size_t room = LineHistory::kMaxLines > others + keep.size() ? LineHistory::kMaxLines - others - keep.size() : 0;
  if (add.size() > room) {
    w.dropped += static_cast<uint32_t>(add.size() - room);
    add.resize(room);
  }
  auto it =
      std::lower_bound(w.markets.begin(), w.markets.end(), id, [](const MarketRef& m, uint32_t i) { return m.id < i; });
  const bool exists = it != w.markets.end() && it->id == id;
  const size_t nlines = keep.size() + add.size();
  w.lines = others + static_cast<uint32_t>(nlines);
  if (nlines == 0) {
    if (exists) w.markets.erase(it);
    return;
  }
  size_t nouts = 0;
  for (uint32_t k : keep) nouts += old->lines[k].count;
  for (uint32_t a : add) nouts += from->lines[a].count;
  Line* lines;
  Outcome* outs;
  auto m = Market::make(id, nlines, nouts, &lines, &outs);
  uint32_t li = 0, oi = 0;
  auto copy = [&](const Market& src, const Line& l) {
    lines[li] = l;
    lines[li++].first = oi;
    for (uint32_t k = 0; k < l.count; ++k) outs[oi++] = src.outcomes[l.first + k];
  };
  for (uint32_t k : keep) copy(*old, old->lines[k]);
  for (uint32_t a : add) copy(*from, from->lines[a]);
  if (exists)
    it->ptr = std::move(m);
  else
    w.markets.insert(it, MarketRef{id, std::move(m)});
}

bool has_key(const Market& m, const std::vector<uint32_t>& idx, LineKey key) {
  for (uint32_t i : idx)
    if (m.lines[i].key == key) return true;
  return false;
}

}  // namespace

int64_t history_on_market(LineHistoryPtr& h, uint64_t edit, const Market* prev, const feed::MarketRec& rec) {
  // Fast path, nearly every record: the same lines priced again, and no
  // withdrawn line of this market to bring back.
  const PricedIn priced(rec);
  bool withdraws = false;
  if (prev)
    for (size_t i = 0; i < prev->lines.size() && !withdraws; ++i)
      withdraws = prev->lines[i].count > 0 && !priced(prev->lines[i].key, i);
  const Market* old = h ? find_market(h->markets, rec.market) : nullptr;
  bool returns = false;
  if (old)
    for (size_t i = 0; i < old->lines.size() && !returns; ++i) returns = priced(old->lines[i].key, SIZE_MAX);
  if (!withdraws && !returns) return 0;
  const int64_t before = static_cast<int64_t>(history_bytes(h.get()));

  std::vector<uint32_t> add, keep;
  if (prev)
    for (uint32_t i = 0; i < prev->lines.size(); ++i)
      if (prev->lines[i].count > 0 && !priced(prev->lines[i].key, i)) add.push_back(i);
  if (old)
    for (uint32_t i = 0; i < old->lines.size(); ++i)
      if (!priced(old->lines[i].key, SIZE_MAX) && !(prev && has_key(*prev, add, old->lines[i].key))) keep.push_back(i);
  replace_market(h, edit, rec.market, old, keep, prev, std::move(add));
  return static_cast<int64_t>(history_bytes(h.get())) - before;
}

int64_t history_on_removal(LineHistoryPtr& h, uint64_t edit, const Market& prev) {
  std::vector<uint32_t> add, keep;
  for (uint32_t i = 0; i < prev.lines.size(); ++i)
    if (prev.lines[i].count > 0) add.push_back(i);
  const Market* old = h ? find_market(h->markets, prev.id) : nullptr;
  if (old)
    for (uint32_t i = 0; i < old->lines.size(); ++i)
      if (!has_key(prev, add, old->lines[i].key)) keep.push_back(i);
  if (add.empty()) return 0;
  const int64_t before = static_cast<int64_t>(history_bytes(h.get()));
  replace_market(h, edit, prev.id, old, keep, &prev, std::move(add));
  return static_cast<int64_t>(history_bytes(h.get())) - before;
}

}  // namespace oddsrelay
