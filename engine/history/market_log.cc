// One market's records and points as a byte log (engine/history/market_log.h).
#include "engine/history/market_log.h"

#include <algorithm>

#include "engine/history/varint.h"

namespace oddsrelay::history {

namespace {

constexpr uint64_t kNull = 1, kQuote = 2;

bool same_layout(const MarketLayout& l, const feed::MarketRec& rec) {
  if (l.size() != rec.lines.size()) return false;
  for (size_t i = 0; i < l.size(); ++i) {
    const feed::LineIn& in = rec.lines[i];
    if (l[i].outcomes.size() != in.count || l[i].key.view() != in.key) return false;
    for (uint32_t j = 0; j < in.count; ++j)
      if (l[i].outcomes[j] != rec.outcomes[in.first + j].id) return false;
  }
  return true;
}

uint64_t layout_hash(const feed::MarketRec& rec) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](uint64_t v) { h = (h ^ v) * 0x100000001b3ull; };
  for (const feed::LineIn& in : rec.lines) {
    for (char c : in.key) mix(static_cast<uint8_t>(c));
    mix(0x100u + in.count);
    for (uint32_t j = 0; j < in.count; ++j) mix(rec.outcomes[in.first + j].id);
  }
  return h;
}

}  // namespace

// Whether `p` is a change the engine stamps an outcome's `ts` with (a new
// price or flags, or a return to the book: engine/core/market.h,
// build_market) is read before the state moves.
void OutcomeState::advance(const Point& p) {
  if (p.priced && (!priced || price != p.price || flags != p.flags)) change_ts = p.ts;
  ts = p.ts;
  seq = p.seq;
  priced = p.priced;
  if (p.priced) {
    price = p.price;
    flags = p.flags;
    s = p.s;
    priced_ts = p.ts;
    priced_seq = p.seq;
  }
}

int32_t MarketLog::intern(const feed::MarketRec& rec) {
  // By hash first (one pass over the record, no layout touched), the one
  // before first; a match is confirmed in place.
  const uint64_t h = layout_hash(rec);
  if (tail_.layout >= 0 && hashes_[static_cast<size_t>(tail_.layout)] == h &&
      same_layout(layouts_[static_cast<size_t>(tail_.layout)], rec))
    return tail_.layout;
  for (size_t i = 0; i < hashes_.size(); ++i)
    if (hashes_[i] == h && same_layout(layouts_[i], rec)) return static_cast<int32_t>(i);
  MarketLayout l;
  l.reserve(rec.lines.size());
  size_t cost = sizeof(MarketLayout) + sizeof(uint64_t) + rec.lines.size() * sizeof(LineLayout);
  for (const feed::LineIn& in : rec.lines) {
    LineLayout line{LineKey(in.key), {}};
    line.outcomes.reserve(in.count);
    for (uint32_t i = in.first; i < in.first + in.count; ++i) line.outcomes.push_back(rec.outcomes[i].id);
    cost += line.outcomes.capacity() * sizeof(uint32_t);
    l.push_back(std::move(line));
  }
  layouts_.push_back(std::move(l));
  hashes_.push_back(h);
  layout_bytes_ += cost;
  return static_cast<int32_t>(layouts_.size() - 1);
}

int32_t MarketLog::begin(uint64_t seq, int64_t at, const feed::MarketRec* rec) {
  const int32_t layout = rec && !rec->lines.empty() ? intern(*rec) : -1;
  // Grown by a quarter rather than doubled: the bytes held are what the
  // memory bound counts, and a doubled vector is a third empty on average.
  if (bytes_.capacity() - bytes_.size() < 64) bytes_.reserve(bytes_.size() + bytes_.size() / 4 + 64);
  put_varint(bytes_, seq - tail_.seq);
  put_varint(bytes_, zigzag(at - tail_.at));
  header_at_ = bytes_.size();
  put_varint(bytes_, static_cast<uint64_t>(layout + 1) << 1);
  tail_ = Mark{seq, at, layout};
  open_points_ = false;
  return layout;
}

void MarketLog::put(uint32_t number, QuoteTail& tail, bool priced, int32_t price, uint32_t flags, uint8_t s) {
  if (!open_points_) {
    bytes_[header_at_] |= 1;  // bit 0 of the varint's value is bit 0 of its first byte
    open_points_ = true;
  }
  if (bytes_.capacity() - bytes_.size() < 24) bytes_.reserve(bytes_.size() + bytes_.size() / 4 + 64);
  const bool quote = priced && (flags != tail.flags || s != tail.s);
  put_varint(bytes_, (static_cast<uint64_t>(number + 1) << 2) | (priced ? 0 : kNull) | (quote ? kQuote : 0));
  if (priced) {
    put_varint(bytes_, zigzag(static_cast<int64_t>(price) - tail.price));
    if (quote) put_varint(bytes_, (static_cast<uint64_t>(flags) << 8) | s);
    tail.price = price;
    tail.flags = flags;
    tail.s = s;
  }
  tail.priced = priced;
}

std::vector<Point> MarketLog::points_of(uint32_t number) const {
  std::vector<Point> out;
  std::vector<OutcomeState> states;
  Mark mark;
  decode(
      UINT64_MAX, states, mark, [](const Mark&) {},
      [&](uint32_t n, const Point& p) {
        if (n == number) out.push_back(p);
      });
  return out;
}

std::optional<MarketLog::Mark> MarketLog::at_or_before(uint64_t seq, std::vector<OutcomeState>* states) const {
  std::vector<OutcomeState> own;
  Mark mark;
  decode(seq, states ? *states : own, mark, [](const Mark&) {}, [](uint32_t, const Point&) {});
  if (mark.seq == 0) return std::nullopt;
  return mark;
}

OutcomeState MarketLog::state_of(uint32_t number) const {
  std::vector<OutcomeState> states;
  Mark mark;
  decode(UINT64_MAX, states, mark, [](const Mark&) {}, [](uint32_t, const Point&) {});
  return states[number];
}

int64_t MarketLog::cut_before(uint64_t seq, std::vector<uint32_t>& remaining, uint64_t& dropped) {
  const size_t before = bytes();
  // Decoded to the last entry before `seq`: that state becomes the base.
  std::vector<OutcomeState> states;
  Mark mark;
  size_t gone = 0;
  decode(
      seq - 1, states, mark, [](const Mark&) {}, [&](uint32_t, const Point&) { ++gone; });
  remaining.assign(base_states_.size(), 0);
  // Where the kept entries start: re-walk the headers to the same entry.
  const uint8_t* p = bytes_.data();
  const uint8_t* end = p + bytes_.size();
  const uint8_t* keep = p;
  {
    Mark m = base_;
    while (p < end) {
      const uint64_t s = m.seq + get_varint(p);
      if (s > seq - 1) break;
      m.seq = s;
      get_varint(p);
      const uint64_t h = get_varint(p);
      if (h & 1)
        for (uint64_t c; (c = get_varint(p)) != 0;) {
          if (!(c & kNull)) get_varint(p);
          if (c & kQuote) get_varint(p);
        }
      keep = p;
    }
  }
  if (keep != bytes_.data()) {
    base_ = mark;
    base_states_ = std::move(states);
    std::vector<uint8_t> rest(keep, end);  // exact capacity: the freed bytes are given back
    bytes_.swap(rest);
    dropped += gone;
  }
  // What is left of each outcome.
  std::vector<OutcomeState> after;
  Mark m;
  decode(
      UINT64_MAX, after, m, [](const Mark&) {}, [&](uint32_t n, const Point&) { ++remaining[n]; });
  return static_cast<int64_t>(before) - static_cast<int64_t>(bytes());
}

size_t MarketLog::bytes() const {
  return sizeof(MarketLog) + bytes_.capacity() + layout_bytes_ + base_states_.capacity() * sizeof(OutcomeState);
}

}  // namespace oddsrelay::history
