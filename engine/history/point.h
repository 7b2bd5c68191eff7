// One point of an outcome's history: what the outcome was after the record
// at `seq` (its `at` as `ts`) changed its price, its flags or its line's
// `s`, or took it out of the market (priced = false: the null point of
// docs/api.md "Odds history"). The decoded form; the stored one is
// engine/history/point_series.h.
#pragma once

#include <cstdint>

namespace oddsrelay::history {

struct Point {
  int64_t ts = 0;
  uint64_t seq = 0;
  int32_t price = 0;  // decimal odds x 100; meaningless when !priced
  uint32_t flags = 0;
  uint8_t s = 0;  // the line's suspension
  bool priced = false;

  // Whether `o` would be no new point after this one.
  bool same_quote(const Point& o) const {
    if (priced != o.priced) return false;
    return !priced || (price == o.price && flags == o.flags && s == o.s);
  }
};

}  // namespace oddsrelay::history
