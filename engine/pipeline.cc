#include "engine/pipeline.h"

#include <chrono>

namespace oddsrelay {

void Pipeline::start() {
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

void Pipeline::stop() {
  if (!thread_.joinable()) return;
  stopping_.store(true, std::memory_order_release);
  thread_.join();
}

void Pipeline::push(feed::Record&& rec) {
  while (queue_.size_approx() > kHighWater) std::this_thread::sleep_for(std::chrono::microseconds(100));
  pushed_.fetch_add(1, std::memory_order_acq_rel);
  queue_.enqueue(std::move(rec));
}

void Pipeline::run() {
  std::vector<feed::Record> buf(batch_max_);
  for (;;) {
    size_t n = queue_.wait_dequeue_bulk_timed(buf.begin(), batch_max_, 20'000);
    if (n == 0) {
      // pushed_ is bumped before enqueue: done == pushed means nothing in flight.
      if (stopping_.load(std::memory_order_acquire) && idle()) break;
      continue;
    }
    for (size_t i = 0; i < n; ++i) engine_.apply(std::move(buf[i]));
    if (BatchPtr b = engine_.commit()) {
      for (BatchSink* s : sinks_) s->on_batch(b);
      batches_.fetch_add(1, std::memory_order_relaxed);
    }
    done_.fetch_add(n, std::memory_order_acq_rel);
  }
}

}  // namespace oddsrelay
