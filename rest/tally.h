// A counter one thread writes and any thread reads: the REST loops' cache
// counters, which /v1/status (on whichever loop answers it) sums over all
// loops. Relaxed atomics; the writer's increment is a load and a store, not
// a locked instruction, since it is the only writer.
#pragma once

#include <atomic>
#include <cstdint>

namespace oddsrelay::rest {

class Tally {
 public:
  void add(uint64_t n = 1) { v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
  void set(uint64_t n) { v_.store(n, std::memory_order_relaxed); }
  uint64_t get() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

}  // namespace oddsrelay::rest
