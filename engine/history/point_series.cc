// The byte form of an outcome's points (engine/history/point_series.h).
#include "engine/history/point_series.h"

#include "engine/history/varint.h"

namespace oddsrelay::history {

namespace {
constexpr uint64_t kNull = 1, kQuote = 2;
}

void PointSeries::append(const Point& pt) {
  // Grown by a quarter rather than doubled: the bytes held are what the
  // memory bound counts, and a doubled vector is a third empty on average.
  if (bytes_.capacity() - bytes_.size() < 24) bytes_.reserve(bytes_.size() + bytes_.size() / 4 + 24);
  put_varint(bytes_, zigzag(pt.ts - tail_.ts));
  const bool quote = pt.priced && (pt.flags != tail_.flags || pt.s != tail_.s);
  put_varint(bytes_, ((pt.seq - tail_.seq) << 2) | (pt.priced ? 0 : kNull) | (quote ? kQuote : 0));
  tail_.ts = pt.ts;
  tail_.seq = pt.seq;
  if (pt.priced) {
    put_varint(bytes_, zigzag(static_cast<int64_t>(pt.price) - tail_.price));
    tail_.price = pt.price;
    if (quote) {
      put_varint(bytes_, (static_cast<uint64_t>(pt.flags) << 8) | pt.s);
      tail_.flags = pt.flags;
      tail_.s = pt.s;
    }
  }
  last_priced_ = pt.priced;
  ++count_;
}

Point PointSeries::decode(const uint8_t*& p, State& st) {
  Point pt;
  st.ts += unzigzag(get_varint(p));
  const uint64_t h = get_varint(p);
  st.seq += h >> 2;
  pt.ts = st.ts;
  pt.seq = st.seq;
  if (!(h & kNull)) {
    st.price = static_cast<int32_t>(st.price + unzigzag(get_varint(p)));
    if (h & kQuote) {
      const uint64_t q = get_varint(p);
      st.flags = static_cast<uint32_t>(q >> 8);
      st.s = static_cast<uint8_t>(q & 0xff);
    }
    pt.priced = true;
    pt.price = st.price;
    pt.flags = st.flags;
    pt.s = st.s;
  }
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

}  // namespace oddsrelay::history
