// Capture writes exactly what was applied: replaying a capture into a fresh
// engine gives byte-identical state (timestamps included).
#include <gtest/gtest.h>

#include "engine/pipeline.h"
#include "engine/state_digest.h"
#include "tests/test_util.h"
#include "engine/storage/feed_file.h"
#include "tools/sources/simulator.h"

namespace oddsrelay {

namespace {

uint64_t replay_digest(const std::string& path) {
  FeedFileReader r;
  std::string err;
  EXPECT_TRUE(r.open(path, err)) << err;
  Engine e;
  feed::Record rec;
  while (r.next(rec)) e.apply(std::move(rec));
  e.commit();
  EXPECT_EQ(r.stats().malformed, 0u);
  return state_digest(*e.current());
}

}  // namespace

class CaptureReplay : public ::testing::TestWithParam<const char*> {};

TEST_P(CaptureReplay, ReplayGivesIdenticalState) {
  test::TempDir dir;
  std::string path = dir.file(GetParam());
  Engine live;
  Pipeline pipeline(live, 64);
  FeedFileWriter capture(FeedFileWriter::Options{false, 0});
  std::string err;
  ASSERT_TRUE(capture.open(path, err)) << err;
  pipeline.add_sink(&capture);
  pipeline.start();
  sim::Simulator sim(sim::SimOptions{3, 150, 500, 100});
  std::vector<feed::Record> out;
  sim.open(1'700'000'000'000, 1'700'000'000'000, out);
  for (int i = 0; i < 20000; ++i) sim.step(sim.now(), out);
  out.push_back(test::rec(R"({"at":1,"op":"remove","id":"424242"})"));  // skipped: not captured
  for (auto& r : out) pipeline.push(std::move(r));
  pipeline.stop();
  capture.close();
  EXPECT_EQ(live.skipped(), 1u);
  EXPECT_EQ(capture.written(), live.applied());
  EXPECT_EQ(replay_digest(path), state_digest(*live.current()));
}

INSTANTIATE_TEST_SUITE_P(PlainAndGzip, CaptureReplay, ::testing::Values("cap.jsonl", "cap.jsonl.gz"));

}  // namespace oddsrelay
