// Varints and zigzag, the byte form of a history point's deltas
// (engine/history/point_series.h): most deltas of a price series (a few
// seconds, a few hundred records, a few ticks) fit one or two bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace oddsrelay::history {

inline uint64_t zigzag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
inline int64_t unzigzag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

inline void put_varint(std::vector<uint8_t>& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v) | 0x80);
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}

// The same into a buffer the caller made room in (up to 10 bytes); returns
// the end. The history thread writes an entry or a point to a small buffer
// and appends it at once: a push_back per byte was a capacity check each.
inline uint8_t* put_varint(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v) | 0x80;
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

// Room for `n` bytes at the end of `out` (a vector of bytes or a string)
// for put_varint(uint8_t*) to write in; cut_to() then trims it to the end
// of what was written. A writer of several varints makes room once: a
// push_back a byte was a capacity check each (perf/PROFILE.md s31).
template <class Bytes>
uint8_t* room(Bytes& out, size_t n) {
  const size_t at = out.size();
  out.resize(at + n);
  return reinterpret_cast<uint8_t*>(out.data()) + at;
}
template <class Bytes>
void cut_to(Bytes& out, const uint8_t* end) {
  out.resize(static_cast<size_t>(end - reinterpret_cast<const uint8_t*>(out.data())));
}

// Reads one varint at `p` (the bytes were written by put_varint, so a
// varint never runs past `end`); advances p.
inline uint64_t get_varint(const uint8_t*& p) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    uint8_t b = *p++;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
}

}  // namespace oddsrelay::history
