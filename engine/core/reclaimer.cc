#include "engine/core/reclaimer.h"

namespace oddsrelay {

Reclaimer::~Reclaimer() {
  if (!thread_.joinable()) return;
  stop_.store(true, std::memory_order_release);
  queue_.enqueue(nullptr);  // wakes the thread
  thread_.join();
}

void Reclaimer::retire(std::shared_ptr<const void> garbage) {
  if (!garbage) return;
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  if (queue_.size_approx() >= kMaxBacklog) {
    inline_frees_.fetch_add(1, std::memory_order_relaxed);
    return;  // `garbage` is freed here, on the caller's thread
  }
  queue_.enqueue(std::move(garbage));
}

void Reclaimer::run() {
  std::shared_ptr<const void> buf[16];
  for (;;) {
    size_t n = queue_.wait_dequeue_bulk(buf, 16);
    for (size_t i = 0; i < n; ++i) buf[i].reset();
    if (stop_.load(std::memory_order_acquire) && queue_.size_approx() == 0) {
      // Anything enqueued before stop_ is in the queue: drain it whole.
      while ((n = queue_.try_dequeue_bulk(buf, 16)) != 0)
        for (size_t i = 0; i < n; ++i) buf[i].reset();
      return;
    }
  }
}

}  // namespace oddsrelay
