// Pinned opens and closes (engine/history/pins.h).
#include "engine/history/pins.h"

#include "engine/history/varint.h"

namespace oddsrelay::history {

namespace {

Point get_point(const uint8_t*& p) {
  Point pt;
  pt.priced = true;
  pt.ts = unzigzag(get_varint(p));
  pt.seq = get_varint(p);
  pt.price = static_cast<int32_t>(unzigzag(get_varint(p)));
  const uint64_t q = get_varint(p);
  pt.flags = static_cast<uint32_t>(q >> 8);
  pt.s = static_cast<uint8_t>(q & 0xff);
  return pt;
}

void put_point(std::vector<uint8_t>& out, uint64_t key, const Point& p) {
  put_varint(out, key);
  put_varint(out, zigzag(p.ts));
  put_varint(out, p.seq);
  put_varint(out, zigzag(p.price));
  put_varint(out, (static_cast<uint64_t>(p.flags) << 8) | p.s);
}

}  // namespace

bool Pins::get(uint32_t number, Point* open, Point* close) const {
  const uint64_t want = (static_cast<uint64_t>(number) << 1) | (close ? 1 : 0);
  const uint8_t* p = bytes_.data();
  const uint8_t* end = p + bytes_.size();
  while (p < end) {
    const uint64_t key = get_varint(p);
    const Point pt = get_point(p);
    if (key > want) return false;
    if (key == want) {
      *(close ? close : open) = pt;
      return true;
    }
  }
  return false;
}

void Pins::set(uint32_t number, uint32_t which, const Point& p) {
  const uint64_t want = (static_cast<uint64_t>(number) << 1) | which;
  // Rewritten whole: a cut is rare, and the new vector's capacity is its size.
  std::vector<uint8_t> out;
  out.reserve(bytes_.size() + 24);
  const uint8_t* q = bytes_.data();
  const uint8_t* end = q + bytes_.size();
  bool put = false;
  while (q < end) {
    const uint8_t* from = q;
    const uint64_t key = get_varint(q);
    get_point(q);
    if (!put && key >= want) {
      put_point(out, want, p);
      put = true;
      if (key == want) continue;
    }
    out.insert(out.end(), from, q);
  }
  if (!put) put_point(out, want, p);
  out.shrink_to_fit();
  bytes_.swap(out);
}

}  // namespace oddsrelay::history
