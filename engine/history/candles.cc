// Candles of an outcome's points (engine/history/candles.h).
#include "engine/history/candles.h"

#include <algorithm>

namespace oddsrelay::history {

std::optional<int64_t> interval_ms(std::string_view name) {
  static constexpr std::pair<std::string_view, int64_t> kIntervals[] = {
      {"raw", 0}, {"1s", 1000}, {"10s", 10'000}, {"1m", 60'000}, {"5m", 300'000}, {"15m", 900'000}, {"1h", 3'600'000}};
  for (const auto& [n, ms] : kIntervals)
    if (n == name) return ms;
  return std::nullopt;
}

void add_candles(const std::vector<Point>& points, int64_t interval, std::vector<Candle>& out) {
  const size_t first = out.size();
  for (const Point& p : points) {
    if (!p.priced) continue;
    // Floor division: a ts before 1970 still falls in the bucket below it.
    int64_t t0 = p.ts / interval * interval;
    if (t0 > p.ts) t0 -= interval;
    // Nearly always the newest bucket; a feed that went back in time finds an older one.
    auto it = out.size() > first && out.back().t0 == t0
                  ? out.end() - 1
                  : std::find_if(out.begin() + static_cast<ptrdiff_t>(first), out.end(),
                                 [t0](const Candle& c) { return c.t0 == t0; });
    if (it == out.end()) {
      out.push_back(Candle{t0, p.price, p.price, p.price, p.price, 1});
      continue;
    }
    it->high = std::max(it->high, p.price);
    it->low = std::min(it->low, p.price);
    it->close = p.price;
    ++it->n;
  }
  std::stable_sort(out.begin() + static_cast<ptrdiff_t>(first), out.end(),
                   [](const Candle& a, const Candle& b) { return a.t0 < b.t0; });
}

}  // namespace oddsrelay::history
