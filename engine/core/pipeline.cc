#include "engine/core/pipeline.h"

#include <algorithm>
#include <chrono>
#include <iterator>

#include "protocol/metrics/data_path.h"
#include "protocol/named_thread.h"

namespace oddsrelay {

namespace {
// stop()'s wake-up record: arrived_ns is a monotonic stamp or 0 on every
// record a source makes (protocol/feed_record.h), never negative.
constexpr int64_t kWake = -1;
}  // namespace

void Pipeline::start() {
  stopping_ = false;
  engine_done_ = false;
  thread_ = named_thread("engine", [this] { run(); });
  log_thread_ = named_thread("delivery", [this] { run_log(); });
}

void Pipeline::stop() {
  if (!thread_.joinable()) return;
  stopping_.store(true, std::memory_order_release);
  // The engine thread waits for records up to kIdleWaitUs at a time; a record
  // behind everything pushed wakes it now, so that a stop (and a replay's
  // --exit-after-replay) is not a timed wait later. It is never applied.
  feed::Record wake;
  wake.arrived_ns = kWake;
  wakes_.fetch_add(1, std::memory_order_release);
  queue_.enqueue(std::move(wake));
  thread_.join();
  engine_done_.store(true, std::memory_order_release);
  // An empty entry wakes the delivery thread now rather than at its next
  // timed wait: a replay's exit (--exit-after-replay) is not 20 ms later.
  log_queue_.enqueue(Sealed{});
  if (log_thread_.joinable()) log_thread_.join();
}

void Pipeline::deliver(const BatchPtr& b, size_t records) {
  engine_.publish(b);
  for (BatchSink* s : sinks_) s->on_batch(b);
  batches_.fetch_add(1, std::memory_order_relaxed);
  done_.fetch_add(records, std::memory_order_acq_rel);
}

// The delivery thread: append (with a log stage), then publish, in seal
// order. Publishing, the sinks (the relay hub encodes its frames there) and
// freeing the versions a batch replaced run here, beside the engine thread,
// not on it: a replay keeps both cores busy.
void Pipeline::run_log() {
  Sealed buf[16];
  for (;;) {
    size_t n = log_queue_.wait_dequeue_bulk_timed(buf, 16, 20'000);
    for (size_t i = 0; i < n; ++i) {
      if (!buf[i].batch) continue;  // stop()'s wake-up
      if (log_) log_->append(*buf[i].batch);
      deliver(buf[i].batch, buf[i].records);
      log_backlog_.taken(*buf[i].batch);
      buf[i].batch.reset();
    }
    if (n == 0 || !buf[n - 1].batch) {
      if (log_) log_->tick();
      if (engine_done_.load(std::memory_order_acquire) && log_queue_.size_approx() == 0) break;
    }
  }
}

void Pipeline::push(feed::Record&& rec) {
  while (queue_.size_approx() > kHighWater) std::this_thread::sleep_for(std::chrono::microseconds(100));
  pushed_.fetch_add(1, std::memory_order_acq_rel);
  queue_.enqueue(std::move(rec));
}

bool Pipeline::replace_state(Engine& from) {
  if (log_ || engine_done_.load(std::memory_order_acquire) || stopping_.load(std::memory_order_acquire)) return false;
  replace_from_.store(&from, std::memory_order_release);
  // The engine thread takes it once the queue is empty and every record
  // before it is delivered (at most one idle wait later).
  while (replace_from_.load(std::memory_order_acquire)) {
    if (engine_done_.load(std::memory_order_acquire)) {  // stopped meanwhile: withdraw unless taken
      Engine* mine = &from;
      if (replace_from_.compare_exchange_strong(mine, nullptr, std::memory_order_acq_rel)) return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

size_t Pipeline::intake_size() const { return std::min(std::max(queue_.size_approx(), kMinIntake), batch_max_); }

size_t Pipeline::without_wake(feed::Record* slots, size_t n) {
  // One load a dequeue. A wake in `slots` was counted before it was
  // enqueued, so its dequeue sees the count.
  if (wakes_.load(std::memory_order_relaxed) == 0) return n;
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    if (slots[i].arrived_ns == kWake) {
      wakes_.fetch_sub(1, std::memory_order_relaxed);
      continue;
    }
    if (kept != i) slots[kept] = std::move(slots[i]);
    ++kept;
  }
  return kept;
}

void Pipeline::run() {
  for (;;) {
    // Stopping with every pushed record applied: done, without another
    // wait (the wake-up may have come out of the queue before the last
    // records, which other threads pushed).
    if (stopping_.load(std::memory_order_acquire) && idle()) break;
    // The queue moves each record straight into its place in the engine's
    // batch (Engine::intake), in slots made for what waits: at a live
    // feed's pace a batch is a record or two, and batch_max slots made and
    // dropped again each batch (a 39 KB vector at 256) were most of the
    // engine thread's work on it.
    size_t want = intake_size();
    feed::Record* slots = engine_.intake(want);
    size_t n = without_wake(slots, queue_.wait_dequeue_bulk_timed(slots, want, idle_wait_us_));
    if (n == 0 && idle()) {
      if (Engine* from = replace_from_.load(std::memory_order_acquire)) {
        deliver(engine_.replace_state(*from), 0);
        replace_from_.store(nullptr, std::memory_order_release);
        continue;
      }
    }
    if (n == 0) {
      // pushed_ is bumped before enqueue: done == pushed means nothing in flight.
      if (stopping_.load(std::memory_order_acquire) && idle()) break;
      continue;
    }
    const int64_t t0 = metrics::steady_ns();
    engine_.apply_intake(n);
    // The rest of what waits, up to batch_max in all, as one wait for
    // batch_max records would have taken.
    for (size_t got = n; got == want && n < batch_max_; n += got) {
      want = std::min(intake_size(), batch_max_ - n);
      feed::Record* more = engine_.intake(want);
      got = without_wake(more, queue_.try_dequeue_bulk(more, want));
      engine_.apply_intake(got);
    }
    // Behind by more than a few batches (a replay at max speed, an edge
    // catching up): the batch takes what waits, up to kCatchUpBatch
    // records. Each batch costs a snapshot (the path copies of every event
    // it touches, their release) and a set of output frames, so fewer,
    // larger batches are what catching up needs; a live burst of a few
    // hundred records is still published every batch_max records.
    bool grew = false;
    while (n < kCatchUpBatch && queue_.size_approx() >= kCatchUpBacklog) {
      const size_t want = std::min(batch_max_, kCatchUpBatch - n);
      feed::Record* slots_more = engine_.intake(want);
      const size_t more = without_wake(slots_more, queue_.try_dequeue_bulk(slots_more, want));
      if (more == 0) break;
      engine_.apply_intake(more);
      n += more;
      grew = true;
    }
    // Behind its source: this batch grew, or one of the kCatchUpTail before
    // it did. Said on the batch for the stages after it (the journal relaxes
    // compaction).
    since_grown_ = grew ? 0 : std::min(since_grown_ + 1, kCatchUpTail + 1);
    BatchPtr b = engine_.seal(t0, since_grown_ <= kCatchUpTail);
    metrics::batch_apply().observe_ns(static_cast<uint64_t>(metrics::steady_ns() - t0));
    if (b) sealed_seq_.store(b->snapshot->seq, std::memory_order_relaxed);
    if (!b) {
      done_.fetch_add(n, std::memory_order_acq_rel);  // all skipped
    } else {
      while (log_backlog_.full()) std::this_thread::sleep_for(std::chrono::microseconds(50));
      log_backlog_.added(*b);
      log_queue_.enqueue(Sealed{std::move(b), n});
    }
  }
}

}  // namespace oddsrelay
