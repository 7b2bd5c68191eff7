// The history recorder's first step (engine/history/history_recorder.h):
// while a restart reads the history's files back on the recorder's thread,
// the engine hands batches over without waiting on the backlog's bound, and
// they are applied after it, in order; a first step that stopped part way
// drops them.
#include "engine/history/history_recorder.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "engine/core/engine.h"
#include "engine/history/history_store.h"
#include "tests/test_util.h"

namespace oddsrelay::history {
namespace {

// More batches than the backlog holds, one record each.
std::vector<BatchPtr> batches(Engine& engine, size_t n) {
  const auto recs = test::sim_records(n);
  std::vector<BatchPtr> out;
  for (const auto& r : recs) {
    engine.apply(feed::Record(r));
    if (auto b = engine.commit()) out.push_back(b);
  }
  return out;
}

// Hands every batch over on a thread of its own; true when all went within
// 5 s while the first step held. A handing-over that waits on the bound
// would wait for ever: the first step is then released, so the thread ends.
bool hand_over(HistoryRecorder& recorder, const std::vector<BatchPtr>& bs, std::atomic<bool>& release) {
  std::atomic<bool> done{false};
  std::thread t([&] {
    for (const BatchPtr& b : bs) recorder.on_batch(b);
    done = true;
  });
  for (int i = 0; i < 500 && !done; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const bool in_time = done.load();
  if (!in_time) release = true;
  t.join();
  return in_time;
}

TEST(HistoryRecorder, BatchesQueueUnboundedWhileTheFirstStepRunsAndFollowIt) {
  Engine engine;
  const auto bs = batches(engine, BatchSink::kMaxSinkBacklog * 3);
  ASSERT_GT(bs.size(), BatchSink::kMaxSinkBacklog * 2);
  HistoryStore store;
  HistoryRecorder recorder(store);
  std::atomic<bool> release{false};
  uint64_t seq_seen_first = 1;
  recorder.start([&](const std::atomic<bool>&) {
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    seq_seen_first = store.state().seq;  // nothing applied before it ends
    return true;
  });
  EXPECT_TRUE(recorder.loading());
  ASSERT_TRUE(hand_over(recorder, bs, release)) << "the engine waited on the history while it read its files";
  EXPECT_EQ(recorder.applied(), 0u);
  EXPECT_EQ(store.state().seq, 0u);
  release = true;
  for (int i = 0; i < 500 && recorder.applied() < bs.size(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  recorder.stop();
  EXPECT_FALSE(recorder.loading());
  EXPECT_EQ(seq_seen_first, 0u);
  EXPECT_EQ(recorder.applied(), bs.size());
  EXPECT_EQ(store.state().seq, bs.back()->snapshot->seq);
}

TEST(HistoryRecorder, AFirstStepThatStoppedDropsWhatQueued) {
  Engine engine;
  const auto bs = batches(engine, 50);
  HistoryStore store;
  HistoryRecorder recorder(store);
  std::atomic<bool> release{false};
  recorder.start([&](const std::atomic<bool>&) {
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return false;
  });
  ASSERT_TRUE(hand_over(recorder, bs, release));
  release = true;
  recorder.stop();
  EXPECT_EQ(recorder.applied(), 0u);
  EXPECT_EQ(store.state().seq, 0u);
  EXPECT_EQ(store.state().points, 0u);
}

// stop() wakes the thread with an empty batch behind the queued ones: it
// returns only once every batch handed over before it is applied.
TEST(HistoryRecorder, StopAppliesEveryBatchQueuedBeforeIt) {
  Engine engine;
  const auto bs = batches(engine, 200);
  HistoryStore store;
  HistoryRecorder recorder(store);
  std::atomic<bool> release{false};
  recorder.start([&](const std::atomic<bool>&) {
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return true;
  });
  ASSERT_TRUE(hand_over(recorder, bs, release));
  EXPECT_EQ(recorder.applied(), 0u);
  std::thread stopper([&] { recorder.stop(); });
  release = true;
  stopper.join();
  EXPECT_EQ(recorder.applied(), bs.size());
  EXPECT_EQ(store.state().seq, bs.back()->snapshot->seq);
  recorder.stop();  // a second stop is a no-op
}

TEST(HistoryRecorder, WithoutAFirstStepItIsNeverLoading) {
  HistoryStore store;
  HistoryRecorder recorder(store);
  recorder.start();
  EXPECT_FALSE(recorder.loading());
  recorder.stop();
}

}  // namespace
}  // namespace oddsrelay::history
