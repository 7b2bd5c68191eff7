// The pipeline's batching (engine/core/pipeline.h): a live trickle is
// published every batch_max records or sooner, a backlog (a replay at max
// speed, an edge catching up) in batches of up to kCatchUpBatch marked
// catch_up, and either way every record is applied once and the state is
// the same.
#include "engine/core/pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/core/state_digest.h"
#include "engine/sources/simulator.h"

namespace oddsrelay {
namespace {

// Records the size of every batch the pipeline delivers, and whether it
// was marked a catch-up's.
struct Delivered {
  size_t size = 0;
  bool catch_up = false;
};
struct BatchSizes : BatchSink {
  std::mutex mu;
  std::vector<Delivered> batches;
  void on_batch(const BatchPtr& b) override {
    std::lock_guard lock(mu);
    batches.push_back({b->records.size(), b->catch_up});
  }
};

std::vector<feed::Record> sim_records(size_t n) {
  sim::Simulator sim(sim::SimOptions{5, 300, 1000, 2000});
  std::vector<feed::Record> out;
  sim.open(1'700'000'000'000, 1'700'000'000'000, out);
  while (out.size() < n) sim.step(sim.now(), out);
  out.resize(n);
  return out;
}

uint64_t digest_one_by_one(const std::vector<feed::Record>& recs) {
  Engine e;
  for (const auto& r : recs) {
    e.apply(feed::Record(r));
    e.commit();
  }
  return state_digest(*e.current());
}

// Pushes `recs` through a pipeline of `batch_max` (the first `backlog` of
// them before the engine thread starts, the rest 10 a millisecond once it
// has applied those: far below what the engine applies even under
// ThreadSanitizer, so it never falls kCatchUpBacklog behind), checks every
// record was applied and the state is the one-record-a-batch state, and
// returns the batches delivered.
std::vector<Delivered> batches(const std::vector<feed::Record>& recs, size_t batch_max, size_t backlog) {
  Engine engine;
  Pipeline pipeline(engine, batch_max);
  BatchSizes sink;
  pipeline.add_sink(&sink);
  std::vector<feed::Record> copy = recs;
  for (size_t i = 0; i < backlog; ++i) pipeline.push(std::move(copy[i]));
  pipeline.start();
  while (!pipeline.idle()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  for (size_t i = backlog; i < copy.size(); ++i) {
    pipeline.push(std::move(copy[i]));
    if (i % 10 == 9) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  pipeline.stop();
  EXPECT_EQ(engine.applied() + engine.skipped(), recs.size());
  EXPECT_EQ(state_digest(*engine.current()), digest_one_by_one(recs));
  return sink.batches;
}

TEST(Pipeline, ABacklogIsAppliedInCatchUpBatches) {
  const std::vector<feed::Record> recs = sim_records(60'000);
  const std::vector<Delivered> got = batches(recs, 256, recs.size());
  size_t largest = 0;
  for (const Delivered& b : got) {
    largest = std::max(largest, b.size);
    // The journal relaxes compaction for these (log_writer.h).
    if (b.size > 256) {
      EXPECT_TRUE(b.catch_up) << "a batch of " << b.size << " not marked a catch-up's";
    }
  }
  EXPECT_GT(largest, 256u) << "a backlog should not be applied 256 records a batch";
  EXPECT_LE(largest, Pipeline::kCatchUpBatch);
  EXPECT_LT(got.size(), recs.size() / 256);
}

TEST(Pipeline, ATrickleIsPublishedEveryBatchMax) {
  for (const Delivered& b : batches(sim_records(2'000), 64, 0)) {
    EXPECT_LE(b.size, 64u) << "no backlog: no batch past batch_max";
    EXPECT_FALSE(b.catch_up) << "no backlog: no catch-up";
  }
}

// A catch-up lasts kCatchUpTail batches past the last batch that grew (a
// replay's source paused by the scheduler is still behind), and ends there:
// the trickle after it is live.
TEST(Pipeline, ACatchUpEndsKCatchUpTailBatchesAfterTheLastOneThatGrew) {
  const std::vector<feed::Record> recs = sim_records(20'000);
  const std::vector<Delivered> got = batches(recs, 64, 18'000);
  size_t last_grown = got.size();
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i].size > 64) last_grown = i;
  ASSERT_LT(last_grown, got.size()) << "the backlog grew no batch";
  ASSERT_GT(got.size(), last_grown + Pipeline::kCatchUpTail + 20) << "too few live batches after the backlog";
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(got[i].catch_up, i <= last_grown + Pipeline::kCatchUpTail)
        << "batch " << i << " of " << got[i].size << ", the last grown " << last_grown;
}

TEST(Pipeline, ABacklogCountsRecordsNotOnlyBatches) {
  Backlog b;
  Batch big;
  big.records.resize(Pipeline::kCatchUpBatch);
  size_t added = 0;
  while (!b.full()) {
    b.added(big);
    ++added;
  }
  EXPECT_EQ(added, (Backlog::kMaxRecords + Pipeline::kCatchUpBatch - 1) / Pipeline::kCatchUpBatch);
  b.taken(big);
  EXPECT_FALSE(b.full());

  Backlog few;
  Batch one;
  one.records.resize(1);
  for (size_t i = 0; i < BatchSink::kMaxSinkBacklog; ++i) few.added(one);
  EXPECT_TRUE(few.full());
}

// A record the engine skips (a `remove` of an event it does not hold) in
// the middle of an intake: the batch holds exactly the applied records, in
// order, and unfilled slots are dropped, so the journal and the outputs
// never see a skipped or an empty record.
feed::Record unknown_remove(int64_t at) {
  feed::Record r;
  r.at = at;
  r.id = "nobody";
  r.number = 999'999'999;
  r.body = feed::RemoveRec{};
  return r;
}

TEST(Pipeline, AnIntakeKeepsOnlyTheAppliedRecordsInOrder) {
  const std::vector<feed::Record> recs = sim_records(6);
  Engine e;
  feed::Record* slots = e.intake(8);
  size_t filled = 0;
  slots[filled++] = unknown_remove(1);
  for (size_t i = 0; i < 3; ++i) slots[filled++] = feed::Record(recs[i]);
  slots[filled++] = unknown_remove(2);
  slots[filled++] = unknown_remove(3);
  e.apply_intake(filled);  // two slots never filled
  slots = e.intake(4);
  for (size_t i = 3; i < 6; ++i) slots[i - 3] = feed::Record(recs[i]);
  e.apply_intake(3);
  const BatchPtr b = e.commit();
  ASSERT_TRUE(b);
  EXPECT_EQ(e.skipped(), 3u);
  ASSERT_EQ(b->records.size(), recs.size());
  for (size_t i = 0; i < recs.size(); ++i) {
    EXPECT_EQ(b->records[i].at, recs[i].at) << i;
    EXPECT_EQ(b->records[i].number, recs[i].number) << i;
    EXPECT_EQ(b->records[i].op(), recs[i].op()) << i;
  }
  EXPECT_EQ(b->first_seq + b->records.size() - 1, b->snapshot->seq);
  EXPECT_EQ(state_digest(*b->snapshot), digest_one_by_one(recs));
}

// Through the pipeline, with skipped records mixed in: every batch's
// records are the applied ones between its first seq and its snapshot's.
struct SeqCheck : BatchSink {
  std::mutex mu;
  size_t records = 0;
  bool consistent = true;
  void on_batch(const BatchPtr& b) override {
    std::lock_guard lock(mu);
    records += b->records.size();
    if (b->first_seq + b->records.size() - 1 != b->snapshot->seq) consistent = false;
    for (const auto& r : b->records)
      if (r.number == 999'999'999) consistent = false;
  }
  // After a stop: `recs` applied, `skipped` others not, and every applied
  // record delivered once, in order, to the state applying them one by one.
  void expect_all(const Engine& engine, const std::vector<feed::Record>& recs, size_t skipped) {
    EXPECT_EQ(engine.skipped(), skipped);
    EXPECT_EQ(engine.applied(), recs.size());
    std::lock_guard lock(mu);
    EXPECT_EQ(records, recs.size());
    EXPECT_TRUE(consistent);
    EXPECT_EQ(state_digest(*engine.current()), digest_one_by_one(recs));
  }
};

TEST(Pipeline, SkippedRecordsNeverReachABatch) {
  const std::vector<feed::Record> recs = sim_records(3000);
  Engine engine;
  Pipeline pipeline(engine, 64);
  SeqCheck sink;
  pipeline.add_sink(&sink);
  size_t skipped = 0;
  for (size_t i = 0; i < recs.size(); ++i) {
    if (i % 7 == 3) {
      pipeline.push(unknown_remove(recs[i].at));
      ++skipped;
    }
    pipeline.push(feed::Record(recs[i]));
  }
  pipeline.start();
  pipeline.stop();
  sink.expect_all(engine, recs, skipped);
}

// stop() wakes the engine thread: with an idle wait of a minute, a stop
// of a pipeline that has applied everything returns long before it.
TEST(Pipeline, StopWakesTheEngineThreadInsteadOfWaitingOutItsIdleWait) {
  const std::vector<feed::Record> recs = sim_records(500);
  Engine engine;
  Pipeline pipeline(engine, 64);
  pipeline.set_idle_wait_us(60'000'000);
  pipeline.start();
  for (const auto& r : recs) pipeline.push(feed::Record(r));
  while (!pipeline.idle()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the thread is in its wait
  const auto t0 = std::chrono::steady_clock::now();
  pipeline.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
  EXPECT_EQ(engine.applied(), recs.size());
  EXPECT_EQ(engine.skipped(), 0u);
}

// The wake-up is not a record: one that a stop left in the queue (the
// thread found nothing to do before it took it) is never applied after a
// restart, and every record around it is.
TEST(Pipeline, AStopsWakeUpIsNeverApplied) {
  const std::vector<feed::Record> recs = sim_records(2000);
  Engine engine;
  Pipeline pipeline(engine, 64);
  SeqCheck sink;
  pipeline.add_sink(&sink);
  for (int i = 0; i < 20; ++i) {
    pipeline.start();
    pipeline.stop();
  }
  pipeline.start();
  for (const auto& r : recs) pipeline.push(feed::Record(r));
  pipeline.stop();
  sink.expect_all(engine, recs, 0);
}

}  // namespace
}  // namespace oddsrelay
