#include "engine/core/line_history.h"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

#include "engine/core/retention.h"

namespace oddsrelay {

namespace {

// Whether the new version of a market prices the line `key` (has it with at
// least one outcome). Lines usually keep their positions, so `hint` is tried
// before the first line with that key; a history line the market does not
// have (nearly all of them) costs a hash and a bit test against a 256-bit
// filter of the market's keys instead of a scan. Keys compare as two words
// (LineKey::operator==): the parser already limits them to what a LineKey
// holds, so these are the record's own keys.
class PricedIn {
 public:
  explicit PricedIn(const Market& next) : next_(next) {}
  // The hint test stays inline: it answers nearly every call.
  bool operator()(const LineKey& key, size_t hint) const {
    const auto& lines = next_.lines;
    if (hint < lines.size() && lines[hint].key == key) [[likely]]
      return lines[hint].count > 0;
    return look_up(key);
  }

 private:
  [[gnu::noinline]] bool look_up(const LineKey& key) const {
    const auto& lines = next_.lines;
    if (lines.size() <= kScan) return scan(key);
    if (!built_) build();
    const uint32_t b = bit(key);
    return (filter_[b >> 6] >> (b & 63) & 1) && scan(key);
  }

  static constexpr size_t kScan = 8;  // up to this many lines a scan is as cheap as the filter
  static uint32_t bit(const LineKey& key) {
    uint64_t w[2];
    std::memcpy(w, &key, sizeof w);
    return static_cast<uint32_t>(((w[0] ^ (w[1] * 0x9e3779b97f4a7c15ULL)) * 0xbf58476d1ce4e5b9ULL) >> 56);
  }
  // The first line with the key decides, as it does for the record.
  bool scan(const LineKey& key) const {
    for (const Line& l : next_.lines)
      if (l.key == key) return l.count > 0;
    return false;
  }
  void build() const {
    built_ = true;
    for (const Line& l : next_.lines) {
      const uint32_t b = bit(l.key);
      filter_[b >> 6] |= uint64_t{1} << (b & 63);
    }
  }
  const Market& next_;
  mutable bool built_ = false;
  mutable uint64_t filter_[4] = {};
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
// Returns how much history_bytes(h) grew: the one market it swapped (and
// the history itself when there was none), so no record walks the history.
int64_t replace_market(LineHistoryPtr& h, uint64_t edit, uint32_t id, const Market* old,
                       const std::vector<uint32_t>& keep, const Market* from, std::vector<uint32_t>& add) {
  int64_t grew = h ? 0 : static_cast<int64_t>(history_header_bytes());
  if (old) grew -= static_cast<int64_t>(market_bytes(*old));
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
    return grew;
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
  grew += static_cast<int64_t>(market_bytes(*m));
  if (exists)
    it->ptr = std::move(m);
  else
    w.markets.insert(it, MarketRef{id, std::move(m)});
  return grew;
}

// True when `next` prices no line that `prev` did not price, so that no
// withdrawn line can come back (the history never holds a line the current
// market prices: every call leaves it so). Then the history market, often
// the largest of the three, need not be read. Only claimed when `prev` has
// no key twice, where "the line prev prices" is one line; lines compare at
// their own position (lines keep their places), anything else is not
// claimed and the caller checks the history itself.
bool prices_nothing_new(const Market* prev, const Market& next) {
  if (!prev || prev->lines.size() > 16) return false;
  const auto& p = prev->lines;
  for (size_t i = 1; i < p.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (p[i].key == p[j].key) return false;
  const auto& n = next.lines;
  for (size_t i = 0; i < n.size(); ++i)
    if (n[i].count > 0 && !(i < p.size() && p[i].key == n[i].key && p[i].count > 0)) return false;
  return true;
}

// True when `next` has `prev`'s keys at the same places and both price
// every line (at least one outcome each): then no line is withdrawn, and
// none comes back, since `next` prices exactly the keys `prev` priced and
// the history holds none of those (after any record whose lines are all
// priced, every call leaves it so). Nearly every record is this one; it
// costs a compare per line of two markets just built and read, and leaves
// the history (cold: the history, its market list, its lines) unread,
// whatever the market's width or repeated keys. With an empty line the
// full path decides: a key a record repeats, empty in one place and
// priced in another, is priced by its first line, not where it stands.
bool same_priced_lines(const Market& prev, const Market& next) {
  const auto &p = prev.lines, &n = next.lines;
  if (p.size() != n.size()) return false;
  for (size_t i = 0; i < n.size(); ++i)
    if (!(p[i].key == n[i].key) || p[i].count == 0 || n[i].count == 0) return false;
  return true;
}

// The lines to add and to keep, and whether each history line is priced
// again, emptied and reused: the engine thread rebuilds a history market
// for a fifth of all market records, and allocating the vectors each time
// showed in its profile.
struct ScratchLists {
  std::vector<uint32_t> add, keep;
  std::vector<uint8_t> again;
};
ScratchLists& scratch_lists() {
  thread_local ScratchLists s;
  s.add.clear();
  s.keep.clear();
  s.again.clear();
  return s;
}

bool has_key(const Market& m, const std::vector<uint32_t>& idx, LineKey key) {
  for (uint32_t i : idx)
    if (m.lines[i].key == key) return true;
  return false;
}

}  // namespace

int64_t history_on_market(LineHistoryPtr& h, uint64_t edit, const Market* prev, const Market& next) {
  if (prev && same_priced_lines(*prev, next)) return 0;
  // Each line is looked up in `next` once: a withdrawn line, or a history
  // line, is not where a hint finds it, and those look-ups were a tenth of
  // apply's instructions when the test below and the lists after it each
  // made their own.
  const PricedIn priced(next);
  auto& [add, keep, again] = scratch_lists();
  if (prev)
    for (uint32_t i = 0; i < prev->lines.size(); ++i)
      if (prev->lines[i].count > 0 && !priced(prev->lines[i].key, i)) add.push_back(i);
  // When `next` prices nothing new, no withdrawn line can return, and the
  // history (two cold reads: the history, its market list) is not read.
  const bool nothing_new = h && prices_nothing_new(prev, next);
  const Market* old = h && !nothing_new ? find_market(h->markets, next.id) : nullptr;
  bool returns = false;
  if (old)
    for (const Line& l : old->lines) {
      again.push_back(priced(l.key, SIZE_MAX));
      returns |= again.back() != 0;
    }
  // Fast path, nearly every record: the same lines priced again, and no
  // withdrawn line of this market to bring back.
  if (add.empty() && !returns) return 0;
  if (nothing_new && (old = find_market(h->markets, next.id)))
    for (const Line& l : old->lines) again.push_back(priced(l.key, SIZE_MAX));
  if (old)
    for (uint32_t i = 0; i < old->lines.size(); ++i)
      if (!again[i] && !(prev && has_key(*prev, add, old->lines[i].key))) keep.push_back(i);
  return replace_market(h, edit, next.id, old, keep, prev, add);
}

int64_t history_on_removal(LineHistoryPtr& h, uint64_t edit, const Market& prev) {
  ScratchLists& s = scratch_lists();
  auto &add = s.add, &keep = s.keep;
  for (uint32_t i = 0; i < prev.lines.size(); ++i)
    if (prev.lines[i].count > 0) add.push_back(i);
  const Market* old = h ? find_market(h->markets, prev.id) : nullptr;
  if (old)
    for (uint32_t i = 0; i < old->lines.size(); ++i)
      if (!has_key(prev, add, old->lines[i].key)) keep.push_back(i);
  if (add.empty()) return 0;
  return replace_market(h, edit, prev.id, old, keep, &prev, add);
}

int64_t history_on_end(LineHistoryPtr& h, uint64_t edit) {
  if (!h || h->markets.empty()) return 0;
  const int64_t before = static_cast<int64_t>(history_bytes(h.get()));
  LineHistory& w = writable(h, edit);
  w.packed = pack_lines(w.markets);
  MarketList().swap(w.markets);
  return static_cast<int64_t>(history_bytes(h.get())) - before;
}

const MarketList& history_markets(const LineHistory& h, MarketList& scratch) {
  if (h.packed.empty()) return h.markets;
  scratch = unpack_lines(h.packed);
  return scratch;
}

}  // namespace oddsrelay
