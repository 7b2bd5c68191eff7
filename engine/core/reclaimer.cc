#include "engine/core/reclaimer.h"

#include <atomic>
#include <thread>

#include "protocol/named_thread.h"

namespace oddsrelay {

Reclaimer::~Reclaimer() {
  if (!thread_.joinable()) return;
  stop_.store(true);
  wake_.signal();
  thread_.join();
}

void Reclaimer::retire(std::shared_ptr<const void> garbage) {
  if (!garbage) return;
  if (!thread_.joinable()) thread_ = named_thread("reclaim", [this] { run(); });
  if (queue_.size_approx() >= kMaxBacklog) {
    inline_frees_.fetch_add(1, std::memory_order_relaxed);
    return;  // `garbage` is freed here, on the caller's thread
  }
  queue_.enqueue(std::move(garbage));
  std::atomic_thread_fence(std::memory_order_seq_cst);  // the enqueue before the look at sleeping_
  if (sleeping_.load() && sleeping_.exchange(false)) {
    wakes_.fetch_add(1, std::memory_order_relaxed);
    wake_.signal();
  }
}

void Reclaimer::run() {
  std::shared_ptr<const void> buf[16];
  auto drain = [&] {
    size_t n, freed = 0;
    while ((n = queue_.try_dequeue_bulk(buf, 16)) != 0) {
      for (size_t i = 0; i < n; ++i) buf[i].reset();
      freed += n;
    }
    return freed;
  };
  int idle = 0;
  for (;;) {
    if (drain() != 0) idle = 0;
    // Everything retired before stop_ is in the queue by now: drain it whole.
    if (stop_.load()) {
      drain();
      return;
    }
    if (idle < kIdlePolls) {
      std::this_thread::sleep_for(kPoll * (1 << idle++));
      continue;
    }
    // To sleep: say so, then look once more. A retire() either enqueued
    // before that look (seen: no sleep) or reads sleeping_ after it was set
    // and signals (all seq_cst, one total order), so no garbage waits for
    // the next one. A signal that finds the thread awake leaves a count the
    // next wait takes at once: an extra, harmless turn.
    sleeping_.store(true);
    std::atomic_thread_fence(std::memory_order_seq_cst);  // the store before the look at the queue
    if (queue_.size_approx() == 0 && !stop_.load()) wake_.wait();
    sleeping_.store(false);
    idle = 0;
  }
}

}  // namespace oddsrelay
