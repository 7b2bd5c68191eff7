// The byte form of an outcome's points (engine/history/point_series.h).
#include "engine/history/point_series.h"

#include "engine/history/varint.h"

namespace oddsrelay::history {

namespace {
constexpr uint64_t kNull = 1, kQuote = 2;
}

// Moves `st` past point `p`. `st` holds the last priced point's quote, so
// whether `p` is a change the engine stamps an outcome's `ts` with (a new
// price or flags, or a return to the book: engine/core/market.h,
// build_market) is read before it moves.
void PointSeries::advance(State& st, const Point& p) {
  if (p.priced && (!st.priced || st.price != p.price || st.flags != p.flags)) st.change_ts = p.ts;
  st.ts = p.ts;
  st.seq = p.seq;
  st.priced = p.priced;
  if (p.priced) {
    st.price = p.price;
    st.flags = p.flags;
    st.s = p.s;
  }
}

void PointSeries::append(const Point& pt) {
  // Grown by a quarter rather than doubled: the bytes held are what the
  // memory bound counts, and a doubled vector is a third empty on average.
  if (bytes_.capacity() - bytes_.size() < 24) bytes_.reserve(bytes_.size() + bytes_.size() / 4 + 24);
  put_varint(bytes_, zigzag(pt.ts - tail_.ts));
  const bool quote = pt.priced && (pt.flags != tail_.flags || pt.s != tail_.s);
  put_varint(bytes_, ((pt.seq - tail_.seq) << 2) | (pt.priced ? 0 : kNull) | (quote ? kQuote : 0));
  if (pt.priced) {
    put_varint(bytes_, zigzag(static_cast<int64_t>(pt.price) - tail_.price));
    if (quote) put_varint(bytes_, (static_cast<uint64_t>(pt.flags) << 8) | pt.s);
  }
  advance(tail_, pt);
  ++count_;
}

Point PointSeries::decode(const uint8_t*& p, State& st) {
  Point pt;
  pt.ts = st.ts + unzigzag(get_varint(p));
  const uint64_t h = get_varint(p);
  pt.seq = st.seq + (h >> 2);
  if (!(h & kNull)) {
    pt.priced = true;
    pt.price = static_cast<int32_t>(st.price + unzigzag(get_varint(p)));
    pt.flags = st.flags;
    pt.s = st.s;
    if (h & kQuote) {
      const uint64_t q = get_varint(p);
      pt.flags = static_cast<uint32_t>(q >> 8);
      pt.s = static_cast<uint8_t>(q & 0xff);
    }
  }
  advance(st, pt);
  return pt;
}

uint32_t PointSeries::cut_before(uint64_t seq) {
  State st = base_;
  const uint8_t* p = bytes_.data();
  const uint8_t* end = p + bytes_.size();
  uint32_t dropped = 0;
  while (p < end) {
    State before = st;
    const uint8_t* at = p;
    if (decode(p, st).seq >= seq) {
      st = before;
      p = at;
      break;
    }
    ++dropped;
  }
  if (dropped == 0) return 0;
  base_ = st;
  std::vector<uint8_t> rest(p, end);  // exact capacity: the freed bytes are given back
  bytes_.swap(rest);
  count_ -= dropped;
  return dropped;
}

PointSeries::Quote PointSeries::quote_at(uint64_t seq) const {
  State st = base_;
  const uint8_t* p = bytes_.data();
  const uint8_t* end = p + bytes_.size();
  while (p < end) {
    State before = st;
    if (decode(p, st).seq > seq) {
      st = before;
      break;
    }
  }
  return Quote{st.priced, st.price, st.flags, st.s, st.change_ts};
}

}  // namespace oddsrelay::history
