// Candles of an outcome's points for `interval` other than raw
// (docs/api.md "Odds history"): buckets aligned to the interval in feed
// time, only buckets with priced points; null points open no bucket and
// are not counted in n. Read side only: made per answer from the points.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "engine/history/point.h"

namespace oddsrelay::history {

struct Candle {
  int64_t t0 = 0;
  int32_t open = 0, high = 0, low = 0, close = 0;
  uint32_t n = 0;
};

// `raw|1s|10s|1m|5m|15m|1h` as milliseconds; 0 for raw; none when unknown.
std::optional<int64_t> interval_ms(std::string_view name);

// Appends to `out` the candle each priced point of `points` (in log order)
// falls in, by t0. Open and close are the bucket's first and last points
// in log order (a feed that goes back in time may interleave buckets).
void add_candles(const std::vector<Point>& points, int64_t interval, std::vector<Candle>& out);

}  // namespace oddsrelay::history
