// Frees the versions of the state that newer batches replaced, on a thread
// of its own (docs/architecture.md, step 2). Releasing an old snapshot walks
// every entry, trie leaf, market and history the next batch replaced (about
// as much work as building them), so on the engine's (or the delivery)
// thread it costs a large share of each record; here the second core takes
// it. The publisher hands over its last reference to an old snapshot; if the
// reclaimer falls kMaxBacklog objects behind, the publisher frees inline
// instead, so garbage never grows without bound.
//
// Handing over must cost the publisher next to nothing: waking a sleeping
// thread is a futex call and an inter-processor interrupt (about 9 us on
// this VM, 4% of bench_apply's time at a batch every 256 records). So while
// garbage keeps coming (a batch at least every few ms: a replay, a busy
// feed) the thread polls, every kPoll while each poll finds some; each
// empty poll doubles the wait before the next (a feed of 200 batches a
// second is polled two or three times a batch, not five), and after
// kIdlePolls empty polls it sleeps until a retire() wakes it, as a quiet
// feed's rare batches do.
#pragma once

#include <concurrentqueue/concurrentqueue.h>
#include <concurrentqueue/lightweightsemaphore.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <thread>

namespace oddsrelay {

class Reclaimer {
 public:
  static constexpr size_t kMaxBacklog = 64;
  static constexpr std::chrono::microseconds kPoll{1000};
  static constexpr int kIdlePolls = 4;  // 1 + 2 + 4 + 8 ms of nothing, then sleep

  Reclaimer() = default;
  Reclaimer(const Reclaimer&) = delete;
  Reclaimer& operator=(const Reclaimer&) = delete;
  // Frees everything still queued, then joins.
  ~Reclaimer();

  // Drops `garbage` on the reclaimer thread (started at the first call).
  // One calling thread at a time.
  void retire(std::shared_ptr<const void> garbage);

  // How many retire() calls freed inline because the backlog was full.
  uint64_t inline_frees() const { return inline_frees_.load(std::memory_order_relaxed); }
  // How many retire() calls had to wake the thread from its sleep.
  uint64_t wakes() const { return wakes_.load(std::memory_order_relaxed); }

 private:
  void run();

  moodycamel::ConcurrentQueue<std::shared_ptr<const void>> queue_;
  moodycamel::LightweightSemaphore wake_;
  std::atomic<bool> sleeping_{false};  // seq_cst with the queue: see run()
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> inline_frees_{0}, wakes_{0};
  std::thread thread_;
};

}  // namespace oddsrelay
