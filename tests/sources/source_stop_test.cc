// A source thread sleeps until its next record is due and wakes for a
// stop (engine/sources/stop_signal.h): the simulator wakes once a step,
// not every millisecond, and neither a long step nor a long gap in a paced
// replay delays stop().
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "engine/core/pipeline.h"
#include "engine/sources/sources.h"
#include "tests/test_util.h"

namespace oddsrelay {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A simulator of five events at `rate` records a second, started, feeding
// a running pipeline.
struct SimRun {
  Engine engine;
  Pipeline pipeline{engine, 64};
  std::unique_ptr<SimSource> source;
  explicit SimRun(double rate) {
    pipeline.start();
    sim::SimOptions opts;
    opts.rate = rate;
    opts.events = 5;
    source = std::make_unique<SimSource>(opts, pipeline);
    source->start();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ~SimRun() {
    source->stop();
    pipeline.stop();
  }
};

TEST(SourceStop, TheSimulatorWakesOnceAStepNotEveryMillisecond) {
  SimRun run(20);  // a step every 50 ms
  const long before = test::voluntary_switches("simulator");
  ASSERT_GE(before, 0) << "no thread named simulator";
  const uint64_t records_before = run.source->status().records.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  const long woke = test::voluntary_switches("simulator") - before;
  // About 12 steps in 600 ms; a thread that slept 1 ms at a time woke
  // about 600 times.
  EXPECT_LT(woke, 60) << "the simulator woke " << woke << " times in 600 ms at 20 steps a second";
  EXPECT_GT(run.source->status().records.load(), records_before) << "the steps were not made";
}

TEST(SourceStop, TheSimulatorStopsInTheMiddleOfALongStep) {
  SimRun run(0.05);  // a step every 20 s
  const auto t = Clock::now();
  run.source->stop();
  EXPECT_LT(seconds_since(t), 5.0) << "stop() waited out the step";
}

TEST(SourceStop, APacedReplayStopsWhileItsNextRecordIsAnHourAway) {
  test::TempDir dir;
  const std::string event =
      "\"op\":\"event\",\"id\":\"s7-101.5001\",\"event\":{\"c\":[1,\"England\",1,\"GB\"],"
      "\"t\":[1001,\"Premier League\",1],\"g\":11,\"ts\":1767225600,\"h\":\"Leeds United\",\"a\":\"York City\","
      "\"co\":101,\"s\":0,\"ms\":10,\"live\":true,\"sport\":1}}\n";
  test::write_file(dir.file("feed.jsonl"),
                   "{\"op\":\"header\",\"format\":\"oddsfeed\",\"version\":1,\"provider\":\"s7\"}\n"
                   "{\"at\":1767225600000," +
                       event + "{\"at\":1767229200000," + event);
  Engine engine;
  Pipeline pipeline(engine, 1);
  pipeline.start();
  ReplaySource source(dir.file("feed.jsonl"), 1.0, pipeline);
  source.start();
  const auto until = Clock::now() + std::chrono::seconds(20);
  while (source.status().records.load() < 1 && Clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ASSERT_EQ(source.status().records.load(), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto t = Clock::now();
  source.stop();
  const double took = seconds_since(t);
  pipeline.stop();
  EXPECT_LT(took, 5.0) << "stop() waited for the next record";
  EXPECT_EQ(source.status().records.load(), 1u) << "the record an hour away was pushed early";
}

}  // namespace
}  // namespace oddsrelay
