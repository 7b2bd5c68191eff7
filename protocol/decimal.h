// Integers as decimal text, for the texts written once per outcome: the
// client digest's terms (digest_terms.h: an outcome id, a price, flags, a
// line's s, each outcome of every market record the engine applies) and
// the relay's odds frames (json_chunk.h). Nearly all of those values are
// under 10,000; std::to_chars first counts a value's digits in a loop and
// then writes them, which showed as a quarter of the applying thread's
// instructions once every record's outcomes were hashed. Values of up to
// four digits are written here from a table of digit pairs; anything else
// (timestamps, negatives, event numbers) goes to std::to_chars. Same text
// either way.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace oddsrelay {

namespace decimal_detail {
inline constexpr char kPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// v < 10,000.
inline char* put_small(char* p, uint32_t v) {
  if (v < 10) {
    *p = static_cast<char>('0' + v);
    return p + 1;
  }
  if (v < 100) {
    std::memcpy(p, kPairs + 2 * v, 2);
    return p + 2;
  }
  if (v < 1000) {
    *p = static_cast<char>('0' + v / 100);
    std::memcpy(p + 1, kPairs + 2 * (v % 100), 2);
    return p + 3;
  }
  std::memcpy(p, kPairs + 2 * (v / 100), 2);
  std::memcpy(p + 2, kPairs + 2 * (v % 100), 2);
  return p + 4;
}
}  // namespace decimal_detail

// The most an `Int` takes in decimal (its digits and a sign), and the most
// any integer type takes: INT64_MIN, 20 characters.
template <class Int>
inline constexpr size_t kDecimalDigits = std::numeric_limits<Int>::digits10 + 1 + std::is_signed_v<Int>;
inline constexpr size_t kMaxDecimal = 20;

// Writes `v` in decimal at `p` (room for kDecimalDigits<Int> bytes) and
// returns the end of what it wrote.
template <class Int>
char* put_decimal(char* p, Int v) {
  static_assert(std::is_integral_v<Int> && !std::is_same_v<Int, bool>);
  static_assert(kDecimalDigits<Int> <= kMaxDecimal);
  bool small;
  if constexpr (std::is_signed_v<Int>)
    small = v >= 0 && v < 10000;
  else
    small = v < 10000u;
  if (small) return decimal_detail::put_small(p, static_cast<uint32_t>(v));
  return std::to_chars(p, p + kDecimalDigits<Int>, v).ptr;
}

}  // namespace oddsrelay
