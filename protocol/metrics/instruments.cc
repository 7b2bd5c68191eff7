#include "protocol/metrics/instruments.h"

#include <algorithm>

namespace oddsrelay::metrics {

Histogram::Histogram(std::initializer_list<uint64_t> bounds_ns)
    : bounds_(bounds_ns), counts_(std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1)) {}

void Histogram::observe_ns(uint64_t ns) {
  // `le` is inclusive: a value equal to a bound belongs to that bucket.
  const size_t i = static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), ns) - bounds_.begin());
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(ns, std::memory_order_relaxed);
}

Histogram::Reading Histogram::read() const {
  Reading r;
  r.cumulative.resize(bounds_.size() + 1);
  uint64_t running = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    running += counts_[i].load(std::memory_order_relaxed);
    r.cumulative[i] = running;
  }
  r.count = running;
  r.sum_ns = sum_ns_.load(std::memory_order_relaxed);
  return r;
}

}  // namespace oddsrelay::metrics
