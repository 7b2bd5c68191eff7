// Makes history points off the applying thread: a pipeline sink
// (engine/core/pipeline.h) that queues each published batch, as the capture
// does, and applies it to the HistoryStore on a thread of its own. The
// engine's only cost is the hand-over; a recorder that falls behind slows
// the engine through the sink backlog rather than growing memory, except
// while a restart reads the history's files back on this thread
// (engine/storage/history_recovery.h): the batches then queue unbounded for
// that read's seconds, so that the state is served meanwhile.
#pragma once

#include <atomic>
#include <functional>
#include <span>
#include <thread>
#include <vector>

#include "engine/core/pipeline.h"
#include "engine/history/history_store.h"
#include "protocol/hand_off_queue.h"

namespace oddsrelay::history {

// Where the recorder also hands what it applied: the history's files under
// --data-dir (engine/storage/history_segments.h). add() per batch, flush()
// after each run of batches the thread took at once.
class AppliedLog {
 public:
  virtual ~AppliedLog() = default;
  virtual void add(uint64_t first_seq, uint64_t seq, std::span<const feed::Record> records,
                   const std::vector<uint64_t>& evicted) = 0;
  virtual void flush() = 0;
};

class HistoryRecorder : public BatchSink {
 public:
  explicit HistoryRecorder(HistoryStore& store, AppliedLog* log = nullptr) : store_(store), log_(log) {}
  ~HistoryRecorder() override { stop(); }

  // `first` runs on the thread before any batch is applied, given the stop
  // flag; loading() is true until it returns. It returns false when it
  // stopped part way: the queued batches are then dropped, not applied.
  using First = std::function<bool(const std::atomic<bool>& stopping)>;
  void start(First first = {});
  bool loading() const { return loading_.load(std::memory_order_acquire); }
  void on_batch(const BatchPtr& batch) override;
  // Applies what is queued, then stops the thread.
  void stop();
  // Batches applied so far (tests wait on it).
  uint64_t applied() const { return applied_.load(std::memory_order_acquire); }

 private:
  void run();

  HistoryStore& store_;
  AppliedLog* log_;
  HandOffQueue<BatchPtr> queue_;
  Backlog backlog_;
  First first_;
  std::atomic<bool> stopping_{false}, running_{false}, loading_{false};
  std::atomic<uint64_t> applied_{0};
  std::thread thread_;
};

}  // namespace oddsrelay::history
