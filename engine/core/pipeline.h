// The engine thread and its input queue (docs/architecture.md, steps 1-2).
// Sources on any thread push records into one moodycamel queue; the engine
// thread drains up to `batch_max` at a time, applies them and seals one
// batch; the delivery thread (the log thread) appends it to the journal when
// there is one, publishes its snapshot and hands it to every sink, in order.
#pragma once

#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

#include "engine/core/engine.h"
#include "protocol/hand_off_queue.h"

namespace oddsrelay {

// Receives every published batch on the delivery thread. Must not block: a
// sink that does I/O queues the batch for its own thread. A sink whose
// thread lags far behind may wait for it to catch up (kMaxSinkBacklog
// batches queued): every queued batch pins its records and the versions it
// replaced, so an unbounded queue is unbounded memory; the engine slows
// instead, as it does for the journal.
class BatchSink {
 public:
  static constexpr size_t kMaxSinkBacklog = 128;  // batches
  virtual ~BatchSink() = default;
  virtual void on_batch(const BatchPtr& batch) = 0;
};

// What a sink (or the journal stage) has queued, in batches and in records.
// A catch-up batch holds up to Pipeline::kCatchUpBatch records, so a bound
// in batches alone would let a lagging sink pin most of a replay; this one
// holds at most kMaxRecords (what kMaxSinkBacklog live batches hold) plus
// the batch that found room.
class Backlog {
 public:
  static constexpr size_t kMaxRecords = BatchSink::kMaxSinkBacklog * 256;
  explicit Backlog(size_t max_batches = BatchSink::kMaxSinkBacklog) : max_batches_(max_batches) {}
  bool full() const {
    return batches_.load(std::memory_order_relaxed) >= max_batches_ ||
           records_.load(std::memory_order_relaxed) >= kMaxRecords;
  }
  void added(const Batch& b) {
    batches_.fetch_add(1, std::memory_order_relaxed);
    records_.fetch_add(b.records.size(), std::memory_order_relaxed);
  }
  void taken(const Batch& b) {
    batches_.fetch_sub(1, std::memory_order_relaxed);
    records_.fetch_sub(b.records.size(), std::memory_order_relaxed);
  }

 private:
  const size_t max_batches_;
  std::atomic<size_t> batches_{0}, records_{0};
};

// The durable stage between sealing a batch and publishing it (the
// journal, engine/storage/log_writer.h). Runs on the pipeline's log thread:
// a batch is published, and reaches the sinks, only after append() returns,
// while the engine thread already applies the next one.
class LogStage {
 public:
  virtual ~LogStage() = default;
  virtual void append(const Batch& batch) = 0;
  virtual void tick() = 0;  // when idle, at least every 20 ms (periodic fsync)
};

class Pipeline {
 public:
  // Queue depth past which push() waits, so a source that outruns the
  // engine (replay at max speed) cannot grow memory without bound.
  static constexpr size_t kHighWater = 1 << 16;
  // A queue this deep after a batch's first batch_max records means the
  // engine is behind: the batch grows to at most kCatchUpBatch records, as
  // many as the queue holds (kHighWater). Each batch costs a snapshot, its
  // release and the relay's frames of every market it changed, so a
  // max-speed replay of 1M records takes 13-18% less time at 65,536 than
  // at 16,384 (perf/PROFILE.md s36); the engine's own apply is the same.
  static constexpr size_t kCatchUpBacklog = 1024;
  static constexpr size_t kCatchUpBatch = 65536;
  // Batch::catch_up marks a batch that grew so, and the kCatchUpTail after
  // the last one: a replay whose source the scheduler pauses for a moment
  // (the engine drains the queue, takes a batch or two of live size, and
  // is behind again) is still one catch-up.
  static constexpr size_t kCatchUpTail = 64;
  // The fewest slots the engine thread makes in the batch for one wait
  // (Engine::intake); it makes more when more records wait (run()).
  static constexpr size_t kMinIntake = 16;
  // How long the engine thread waits for records before it looks at what
  // else it has to do (a replace_state(), a stop() that found it busy).
  static constexpr int64_t kIdleWaitUs = 20'000;

  explicit Pipeline(Engine& engine, size_t batch_max = 256) : engine_(engine), batch_max_(batch_max) {}
  ~Pipeline() { stop(); }

  void add_sink(BatchSink* sink) { sinks_.push_back(sink); }  // before start()
  void set_log(LogStage* log) { log_ = log; }                 // before start()
  // Something downstream writes the records out again (the journal, a
  // capture, the bus): sources that parse lines keep each record's line
  // (feed::Record::text) so that it is copied rather than encoded again.
  void set_record_text(bool on) { record_text_ = on; }  // before the sources start
  // Before start(): the tests lengthen it to see that a stop waits none out.
  void set_idle_wait_us(int64_t us) { idle_wait_us_ = us; }
  bool record_text() const { return record_text_; }
  void start();
  // Stops after everything pushed so far is applied and handed to the sinks.
  void stop();

  // Any thread. Waits while the queue is past kHighWater.
  void push(feed::Record&& rec);

  // Replaces the engine's state with `from`'s between two records (an edge
  // rejoining its log after a hole, engine/bus/bus_source.h): once every
  // record pushed before is applied and delivered, the engine thread takes
  // the state (Engine::replace_state) and delivers it like a batch, marked
  // `reset`, so each sink sees it in order with the batches around it.
  // Returns once delivered. Call from the thread that pushes, with nothing
  // pushed meanwhile; false with a log stage (a journal cannot hold a jump)
  // or when the pipeline is not running.
  bool replace_state(Engine& from);

  // True when every pushed record has been applied (or skipped).
  bool idle() const { return done_.load(std::memory_order_acquire) == pushed_.load(std::memory_order_acquire); }
  uint64_t batches() const { return batches_.load(std::memory_order_relaxed); }
  // Log position of the last batch sealed (0: none this run); the journal
  // and the outputs trail it (the metrics' journal and bus lag).
  uint64_t sealed_seq() const { return sealed_seq_.load(std::memory_order_relaxed); }

 private:
  size_t intake_size() const;
  // The records of a dequeue without stop()'s wake-up (below), if it is
  // among them; returns how many are left.
  size_t without_wake(feed::Record* slots, size_t n);
  void run();
  void run_log();
  void deliver(const BatchPtr& b, size_t records);

  // Sealed batches on their way to the log thread, with the number of
  // pushed records each accounts for (skipped ones included).
  struct Sealed {
    BatchPtr batch;
    size_t records = 0;
  };
  static constexpr size_t kLogQueueMax = 64;  // batches; the engine waits past it
  Backlog log_backlog_{kLogQueueMax};

  Engine& engine_;
  size_t batch_max_;
  int64_t idle_wait_us_ = kIdleWaitUs;
  std::vector<BatchSink*> sinks_;
  LogStage* log_ = nullptr;
  bool record_text_ = false;
  HandOffQueue<Sealed> log_queue_;
  std::atomic<bool> engine_done_{true};  // no engine thread running (before start, after stop)
  std::thread log_thread_;
  HandOffQueue<feed::Record> queue_;
  std::atomic<uint64_t> pushed_{0}, done_{0}, batches_{0}, sealed_seq_{0};
  std::atomic<bool> stopping_{false};
  // stop() wakes the engine thread with a record no source makes
  // (pipeline.cc's kWake), so that a stop is not a timed wait later; this
  // counts those not yet taken out of a dequeue.
  std::atomic<uint32_t> wakes_{0};
  size_t since_grown_ = kCatchUpTail + 1;       // engine thread: batches since the last catch-up-sized one
  std::atomic<Engine*> replace_from_{nullptr};  // a replace_state() waiting for the engine thread
  std::thread thread_;
};

}  // namespace oddsrelay
