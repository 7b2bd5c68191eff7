// The history recorder's thread (engine/history/history_recorder.h).
#include "engine/history/history_recorder.h"

#include <chrono>

#include "protocol/named_thread.h"

namespace oddsrelay::history {

void HistoryRecorder::start(First first) {
  first_ = std::move(first);
  loading_.store(static_cast<bool>(first_), std::memory_order_release);
  running_ = true;
  thread_ = named_thread("history", [this] { run(); });
}

void HistoryRecorder::on_batch(const BatchPtr& batch) {
  // Bounded backlog (pipeline.h): a lagging recorder slows the feed.
  while (backlog_.full() && running_.load(std::memory_order_relaxed) && !stopping_.load(std::memory_order_relaxed) &&
         !loading_.load(std::memory_order_relaxed))
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  backlog_.added(*batch);
  queue_.enqueue(batch);
}

void HistoryRecorder::run() {
  BatchPtr batches[64];
  const bool go_on = !first_ || first_(stopping_);
  loading_.store(false, std::memory_order_release);
  for (;;) {
    size_t n = queue_.wait_dequeue_bulk_timed(batches, 64, 50'000);
    if (n == 0 && stopping_.load(std::memory_order_acquire) && queue_.size_approx() == 0) break;
    bool woken = false;
    for (size_t i = 0; i < n; ++i) {
      if (!batches[i]) {  // stop()'s wake-up: every batch before it is taken
        woken = true;
        continue;
      }
      backlog_.taken(*batches[i]);
      if (!go_on) {
        batches[i].reset();
        continue;
      }
      store_.apply(*batches[i]);
      if (log_ && !batches[i]->reset)
        log_->add(batches[i]->first_seq, batches[i]->snapshot->seq, batches[i]->records,
                  HistoryStore::evicted(*batches[i]));
      batches[i].reset();
      applied_.fetch_add(1, std::memory_order_release);
    }
    if (log_ && n > 0) log_->flush();
    if (woken && queue_.size_approx() == 0) break;
  }
}

void HistoryRecorder::stop() {
  if (!thread_.joinable()) return;
  stopping_.store(true, std::memory_order_release);
  // An empty batch wakes the thread now rather than at its next timed
  // wait: a replay's exit (--exit-after-replay) is not 50 ms later.
  queue_.enqueue(BatchPtr{});
  thread_.join();
  running_ = false;
}

}  // namespace oddsrelay::history
