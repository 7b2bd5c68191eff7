// Makes history points off the applying thread: a pipeline sink
// (engine/core/pipeline.h) that queues each published batch, as the capture
// does, and applies it to the HistoryStore on a thread of its own. The
// engine's only cost is the hand-over; a recorder that falls behind slows
// the engine through the sink backlog rather than growing memory.
#pragma once

#include <concurrentqueue/blockingconcurrentqueue.h>

#include <atomic>
#include <thread>

#include "engine/core/pipeline.h"
#include "engine/history/history_store.h"

namespace oddsrelay::history {

class HistoryRecorder : public BatchSink {
 public:
  explicit HistoryRecorder(HistoryStore& store) : store_(store) {}
  ~HistoryRecorder() override { stop(); }

  void start();
  void on_batch(const BatchPtr& batch) override;
  // Applies what is queued, then stops the thread.
  void stop();
  // Batches applied so far (tests wait on it).
  uint64_t applied() const { return applied_.load(std::memory_order_acquire); }

 private:
  void run();

  HistoryStore& store_;
  moodycamel::BlockingConcurrentQueue<BatchPtr> queue_;
  Backlog backlog_;
  std::atomic<bool> stopping_{false}, running_{false};
  std::atomic<uint64_t> applied_{0};
  std::thread thread_;
};

}  // namespace oddsrelay::history
