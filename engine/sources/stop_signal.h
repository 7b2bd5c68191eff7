// How a source thread waits for its next record's time and still stops at
// once: the simulator sleeps until its next step is due, a paced replay
// until its next record's `at` comes round. A stop() that found the thread
// asleep wakes it instead of waiting out the sleep, so a source never
// wakes just to look at a flag (the simulator did so every millisecond,
// five times a step at its default rate), and a step or gap of minutes
// does not delay a stop. The flag is also an atomic, for the max-speed
// replay's loop, which checks it once a record and never sleeps.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace oddsrelay {

class StopSignal {
 public:
  using Clock = std::chrono::steady_clock;

  void request() {
    {
      std::lock_guard lock(mu_);
      stop_.store(true, std::memory_order_relaxed);
    }
    cv_.notify_all();
  }
  bool requested() const { return stop_.load(std::memory_order_relaxed); }
  // Sleeps until `deadline` or a request(), whichever comes first; true
  // when stopped.
  bool sleep_until(Clock::time_point deadline) {
    std::unique_lock lock(mu_);
    return cv_.wait_until(lock, deadline, [this] { return stop_.load(std::memory_order_relaxed); });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<bool> stop_{false};
};

}  // namespace oddsrelay
