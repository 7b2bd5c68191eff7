// Each source stamps its records as they reach the node (feed::Record::
// arrived_ns, the monotonic clock), and the engine turns the oldest stamp
// of a batch into Batch::arrived_us on the wall clock of sealed_us: the
// start of the INFO's latency stages (docs/api.md, "Latency stamps"). The
// bus follower stamps per message; the e2e test test_arrival_stamps.py
// checks it on an edge's INFO.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/core/pipeline.h"
#include "engine/sources/sources.h"
#include "protocol/clock.h"
#include "tests/test_util.h"

namespace oddsrelay {
namespace {

// Every record a pipeline applied, with its arrival stamp, and each
// batch's stamps.
struct Seen : BatchSink {
  std::mutex mu;
  std::vector<int64_t> arrived_ns;  // per record, in log order
  std::vector<BatchPtr> batches;
  void on_batch(const BatchPtr& b) override {
    std::lock_guard lock(mu);
    for (const feed::Record& r : b->records) arrived_ns.push_back(r.arrived_ns);
    batches.push_back(b);
  }
  size_t records() {
    std::lock_guard lock(mu);
    return arrived_ns.size();
  }
};

void wait_records(Seen& seen, size_t n) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (seen.records() < n && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ASSERT_GE(seen.records(), n);
}

// A batch's arrival is its oldest record's, on the wall clock of sealing:
// never after sealed_us, and behind it by the time the record waited.
void expect_batch_stamps(const Seen& seen) {
  ASSERT_FALSE(seen.batches.empty());
  for (const BatchPtr& b : seen.batches) {
    ASSERT_GT(b->arrived_us, 0);
    EXPECT_LE(b->arrived_us, b->sealed_us);
    EXPECT_LT(b->sealed_us - b->arrived_us, 5'000'000) << "a record waited seconds for its batch";
  }
}

TEST(ArrivalStamps, TheEngineTakesTheOldestStampOfABatchOnTheWallClock) {
  Engine engine;
  std::vector<feed::Record> recs = test::sim_records(3);
  const int64_t now = mono_ns();
  recs[0].arrived_ns = now - 3'000'000;  // waited 3 ms
  recs[1].arrived_ns = now - 7'000'000;  // the oldest: 7 ms
  recs[2].arrived_ns = 0;                // not stamped: ignored
  for (auto& r : recs) engine.apply(std::move(r));
  const BatchPtr b = engine.commit();
  ASSERT_TRUE(b);
  const int64_t waited = b->sealed_us - b->arrived_us;
  EXPECT_GE(waited, 7'000);
  EXPECT_LT(waited, 7'000 + 500'000);  // the sealing itself, on a loaded machine
  // The next batch starts afresh; one without any stamp has none.
  engine.apply(test::event(2'000'000, "s7-9.9", 1, true));
  const BatchPtr b2 = engine.commit();
  ASSERT_TRUE(b2);
  EXPECT_EQ(b2->arrived_us, 0);
}

TEST(ArrivalStamps, TheSimulatorStampsARecordWhenItMakesIt) {
  Engine engine;
  Pipeline pipeline(engine, 64);
  Seen seen;
  pipeline.add_sink(&seen);
  pipeline.start();
  sim::SimOptions opts;
  opts.rate = 2000;
  opts.events = 50;
  SimSource source(opts, pipeline);
  const int64_t before = mono_ns();
  source.start();
  wait_records(seen, 500);
  source.stop();
  pipeline.stop();
  const int64_t after = mono_ns();
  std::lock_guard lock(seen.mu);
  int64_t prev = 0;
  for (int64_t t : seen.arrived_ns) {
    ASSERT_GE(t, before);
    ASSERT_LE(t, after);
    EXPECT_GE(t, prev) << "stamps go back in log order";
    prev = t;
  }
  // Made over time at 2,000 a second, not stamped at once.
  EXPECT_GT(seen.arrived_ns.back() - seen.arrived_ns.front(), 50'000'000);
  expect_batch_stamps(seen);
}

// Records of a paced replay arrive when they fall due, not when the reader
// read them ahead; at max speed, when read.
TEST(ArrivalStamps, AReplayStampsARecordWhenItIsDue) {
  test::TempDir dir;
  // The fixture's event, then five market records 100 ms apart.
  std::string file =
      "{\"op\":\"header\",\"format\":\"oddsfeed\",\"version\":1,\"provider\":\"s7\"}\n"
      "{\"at\":1767225600000,\"op\":\"event\",\"id\":\"s7-101.5001\",\"event\":{\"c\":[1,\"England\",1,\"GB\"],"
      "\"t\":[1001,\"Premier League\",1],\"g\":11,\"ts\":1767225600,\"h\":\"Leeds United\",\"a\":\"York City\","
      "\"co\":101,\"s\":0,\"ms\":10,\"live\":true,\"sport\":1}}\n";
  for (int i = 0; i < 5; ++i)
    file += "{\"at\":" + std::to_string(1767225600000 + 100 * (i + 1)) +
            ",\"op\":\"market\",\"id\":\"s7-101.5001\",\"market\":1001,\"lines\":{\"s\":{\"s\":0,\"o\":{\"2001\":[" +
            std::to_string(150 + i) + ",0]}}}}\n";
  test::write_file(dir.file("feed.jsonl"), file);
  for (const double speed : {1.0, 0.0}) {
    Engine engine;
    Pipeline pipeline(engine, 1);
    Seen seen;
    pipeline.add_sink(&seen);
    pipeline.start();
    ReplaySource source(dir.file("feed.jsonl"), speed, pipeline);
    const int64_t before = mono_ns();
    source.start();
    wait_records(seen, 6);
    source.stop();
    pipeline.stop();
    std::lock_guard lock(seen.mu);
    ASSERT_EQ(seen.arrived_ns.size(), 6u);
    for (size_t i = 0; i < 6; ++i) {
      ASSERT_GE(seen.arrived_ns[i], before);
      if (speed > 0) {
        // Due 100 ms apart in feed time at speed 1, counted from when the
        // replay started (after `before`). A due time is a lower bound only:
        // a loaded machine wakes the reader late, never early, so no stamp is
        // compared with another stamp that may itself be late.
        EXPECT_GE(seen.arrived_ns[i] - before, static_cast<int64_t>(i) * 100'000'000 - 1'000'000)
            << "record " << i << " stamped before it was due";
      }
    }
    if (speed == 0) {
      EXPECT_LT(seen.arrived_ns[5] - seen.arrived_ns[0], 100'000'000) << "max speed: stamped as read";
    }
    expect_batch_stamps(seen);
  }
}

}  // namespace
}  // namespace oddsrelay
