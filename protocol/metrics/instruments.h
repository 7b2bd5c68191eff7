// The two kinds of instrument the data path updates for /metrics: a counter
// and a histogram with fixed buckets. Updates are relaxed atomic adds (no
// lock, no allocation), so the engine, relay and REST threads can count on
// their hot paths; the scrape reads them on the REST thread. Everything the
// components already count (engine.applied(), RelayStats, LogStats, ...) is
// read at scrape time instead and needs no instrument (docs/metrics.md).
#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <vector>

namespace oddsrelay::metrics {

class Counter {
 public:
  void add(uint64_t n = 1) { v_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

// Durations in nanoseconds into buckets whose upper bounds are given in
// nanoseconds (ascending); exposed in seconds. Each bucket counts only its
// own range, and the scrape adds them up, so the cumulative counts it shows
// are monotonic and end in the total even while other threads observe.
class Histogram {
 public:
  Histogram(std::initializer_list<uint64_t> bounds_ns);

  void observe_ns(uint64_t ns);

  struct Reading {
    std::vector<uint64_t> cumulative;  // per bound, then the +Inf bucket (== count)
    uint64_t count = 0;
    uint64_t sum_ns = 0;
  };
  Reading read() const;
  const std::vector<uint64_t>& bounds_ns() const { return bounds_; }

 private:
  std::vector<uint64_t> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;  // bounds_.size() + 1: the last is past every bound
  std::atomic<uint64_t> sum_ns_{0};
};

}  // namespace oddsrelay::metrics
