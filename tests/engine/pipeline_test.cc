// The pipeline's batching (engine/core/pipeline.h): a live trickle is
// published every batch_max records or sooner, a backlog (a replay at max
// speed, an edge catching up) in batches of up to kCatchUpBatch, and either
// way every record is applied once and the state is the same.
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

// Records the size of every batch the pipeline delivers.
struct BatchSizes : BatchSink {
  std::mutex mu;
  std::vector<size_t> sizes;
  void on_batch(const BatchPtr& b) override {
    std::lock_guard lock(mu);
    sizes.push_back(b->records.size());
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

// Pushes `recs` through a pipeline of `batch_max` (all of them before the
// engine thread starts when `backlog`, else 10 a millisecond: far below
// what the engine applies even under ThreadSanitizer, so it never falls
// kCatchUpBacklog behind), checks every record was applied and the state
// is the one-record-a-batch state, and returns the batch sizes.
std::vector<size_t> batch_sizes(const std::vector<feed::Record>& recs, size_t batch_max, bool backlog) {
  Engine engine;
  Pipeline pipeline(engine, batch_max);
  BatchSizes sink;
  pipeline.add_sink(&sink);
  if (!backlog) pipeline.start();
  std::vector<feed::Record> copy = recs;
  for (size_t i = 0; i < copy.size(); ++i) {
    pipeline.push(std::move(copy[i]));
    if (!backlog && i % 10 == 9) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (backlog) pipeline.start();
  pipeline.stop();
  EXPECT_EQ(engine.applied() + engine.skipped(), recs.size());
  EXPECT_EQ(state_digest(*engine.current()), digest_one_by_one(recs));
  return sink.sizes;
}

TEST(Pipeline, ABacklogIsAppliedInCatchUpBatches) {
  const std::vector<feed::Record> recs = sim_records(60'000);
  const std::vector<size_t> sizes = batch_sizes(recs, 256, true);
  const size_t largest = *std::max_element(sizes.begin(), sizes.end());
  EXPECT_GT(largest, 256u) << "a backlog should not be applied 256 records a batch";
  EXPECT_LE(largest, Pipeline::kCatchUpBatch);
  EXPECT_LT(sizes.size(), recs.size() / 256);
}

TEST(Pipeline, ATrickleIsPublishedEveryBatchMax) {
  for (size_t n : batch_sizes(sim_records(2'000), 64, false))
    EXPECT_LE(n, 64u) << "no backlog: no batch past batch_max";
}

// A sink's backlog is full at kMaxSinkBacklog batches or at kMaxRecords
// records, whichever comes first: a few catch-up batches fill it.
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

}  // namespace
}  // namespace oddsrelay
