// Frees the versions of the state that newer batches replaced, on a thread
// of its own (docs/architecture.md, step 2). Releasing an old snapshot walks
// every entry, trie leaf, market and history the next batch replaced (about
// as much work as building them), so on the engine's (or the delivery)
// thread it costs a large share of each record; here the second core takes
// it. The publisher hands over its last reference to an old snapshot; if the
// reclaimer falls kMaxBacklog objects behind, the publisher frees inline
// instead, so garbage never grows without bound.
#pragma once

#include <concurrentqueue/blockingconcurrentqueue.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <thread>

namespace oddsrelay {

class Reclaimer {
 public:
  static constexpr size_t kMaxBacklog = 64;

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

 private:
  void run();

  moodycamel::BlockingConcurrentQueue<std::shared_ptr<const void>> queue_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> inline_frees_{0};
  std::thread thread_;
};

}  // namespace oddsrelay
