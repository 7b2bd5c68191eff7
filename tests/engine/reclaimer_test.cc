// The reclaimer frees replaced state versions on its own thread, never
// loses one (everything retired is freed by its destructor at the latest),
// and frees inline once its backlog is full.
#include "engine/core/reclaimer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "engine/core/engine.h"
#include "tests/test_util.h"

namespace oddsrelay {
namespace {

struct Tracked {
  Tracked(std::atomic<int>* f, std::atomic<int>* c) : freed(f), on_caller(c) {}
  Tracked(const Tracked&) = delete;
  std::atomic<int>* freed;
  std::atomic<int>* on_caller;
  std::thread::id caller = std::this_thread::get_id();
  ~Tracked() {
    freed->fetch_add(1);
    if (std::this_thread::get_id() == caller) on_caller->fetch_add(1);
  }
};

TEST(Reclaimer, FreesOnItsOwnThreadAndDrainsOnDestruction) {
  std::atomic<int> freed{0}, on_caller{0};
  {
    Reclaimer r;
    for (int i = 0; i < 40; ++i) r.retire(std::make_shared<const Tracked>(&freed, &on_caller));
    EXPECT_EQ(r.inline_frees(), 0u);
  }
  EXPECT_EQ(freed.load(), 40);
  EXPECT_EQ(on_caller.load(), 0);
}

TEST(Reclaimer, ReleasesOnlyTheLastReference) {
  std::atomic<int> freed{0}, on_caller{0};
  auto kept = std::make_shared<const Tracked>(&freed, &on_caller);
  {
    Reclaimer r;
    r.retire(kept);
  }
  EXPECT_EQ(freed.load(), 0);  // still held here
  kept.reset();
  EXPECT_EQ(freed.load(), 1);
  EXPECT_EQ(on_caller.load(), 1);
}

// Garbage that keeps coming is picked up by the thread's polls: handing it
// over does not wake the thread (a futex call and an interrupt each).
TEST(Reclaimer, PollsWhileGarbageKeepsComingAndWakesOnlyFromSleep) {
  std::atomic<int> freed{0}, on_caller{0};
  Reclaimer r;
  auto wait_freed = [&](int n) {
    for (int i = 0; i < 4000 && freed.load() < n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return freed.load();
  };
  constexpr int kSteady = 40;
  for (int i = 0; i < kSteady; ++i) {
    r.retire(std::make_shared<const Tracked>(&freed, &on_caller));
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  ASSERT_EQ(wait_freed(kSteady), kSteady);
  // A few wakes at most (the thread may start asleep, or a loaded machine
  // may leave this thread off the CPU for longer than the thread's idle
  // polls); one a retire() would be kSteady.
  EXPECT_LE(r.wakes(), 5u);
  // Asleep after its idle polls, it is woken by the next garbage.
  const uint64_t before = r.wakes();
  std::this_thread::sleep_for(Reclaimer::kPoll * (Reclaimer::kIdlePolls * 40));
  r.retire(std::make_shared<const Tracked>(&freed, &on_caller));
  EXPECT_EQ(wait_freed(kSteady + 1), kSteady + 1);
  EXPECT_EQ(r.wakes(), before + 1);
  EXPECT_EQ(on_caller.load(), 0);
}

// Garbage every 10 ms (a feed of 100 batches a second): each empty poll
// doubles the wait before the next (1, 2, 4, 8 ms), so the thread looks
// about four times a batch instead of every kPoll, and is still polling
// when the next batch comes: handing it over never wakes the thread (with
// five 1 ms polls it fell asleep before each batch, and each retire() paid
// a wake).
TEST(Reclaimer, PollsLessOftenBetweenSparseBatchesAndStaysAwakeForThem) {
  std::atomic<int> freed{0}, on_caller{0};
  Reclaimer r;
  r.retire(std::make_shared<const Tracked>(&freed, &on_caller));  // starts the thread
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const long before = test::voluntary_switches("reclaim");
  const uint64_t wakes_before = r.wakes();
  ASSERT_GE(before, 0) << "no thread named reclaim";
  constexpr int kBatches = 30;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 1; i <= kBatches; ++i) {
    std::this_thread::sleep_until(t0 + std::chrono::milliseconds(10 * i));
    r.retire(std::make_shared<const Tracked>(&freed, &on_caller));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const long woke = test::voluntary_switches("reclaim") - before;
  // At most four polls a batch (120), one more where it slept; polling
  // every millisecond and sleeping after five empty polls took about 180.
  EXPECT_LT(woke, 150) << "the reclaimer woke " << woke << " times for " << kBatches << " batches in 300 ms";
  // A few at most, where a loaded machine (this runs under TSan beside
  // end-to-end tests) delayed this thread's retire() past the thread's
  // 15 ms of polls; sleeping before each batch was 30.
  EXPECT_LE(r.wakes() - wakes_before, 10u);
  for (int i = 0; i < 2000 && freed.load() < kBatches + 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(freed.load(), kBatches + 1);
  EXPECT_EQ(on_caller.load(), 0);
}

TEST(Reclaimer, EngineHandsReplacedSnapshotsOver) {
  // A snapshot dropped by the store goes to the reclaimer: after many
  // commits every old version is freed, none on this thread's watch.
  Engine e;
  std::weak_ptr<const Snapshot> first;
  for (int b = 0; b < 8; ++b) {
    e.apply(test::market(1000 + b, "s7-1.5", 1001, {{"s", 0, {{2001, 185 + b, 0}}}}));
    BatchPtr batch = e.commit();
    ASSERT_TRUE(batch);
    if (b == 0) first = batch->snapshot;
  }
  // Give the reclaimer thread a moment: the release is asynchronous.
  for (int i = 0; i < 2000 && !first.expired(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(first.expired());
  EXPECT_EQ(e.current()->seq, 8u);
}

}  // namespace
}  // namespace oddsrelay
