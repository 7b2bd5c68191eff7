// The server's replay source at max speed (engine/sources/sources.cc):
// every record must reach the engine once, in file order, so the state is
// the one applying the file directly gives, and the replay's account of
// itself (records, malformed lines) must be the file's; stopped part-way,
// it counts what it handed over. Runs under the TSan preset too.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "engine/core/pipeline.h"
#include "engine/core/state_digest.h"
#include "engine/sources/read_ahead.h"
#include "engine/sources/sources.h"
#include "protocol/feed_writer.h"
#include "tests/test_util.h"

namespace oddsrelay {
namespace {

// More records than the read-ahead holds, a partial last chunk, and a
// malformed line in the middle of a chunk.
struct Feed {
  std::string path;
  uint64_t want_digest = 0;
  size_t records = 0;
};

Feed write_feed(const test::TempDir& dir) {
  const size_t n = ReadAhead::kChunk * (ReadAhead::kMaxChunks + 5) + 37;
  std::vector<feed::Record> recs = test::sim_records(n, 5);
  std::string text = "{\"op\":\"header\",\"format\":\"oddsfeed\",\"version\":1}\n";
  for (size_t i = 0; i < recs.size(); ++i) {
    std::string line;
    feed::write_record(recs[i], line);
    text += line + "\n";
    if (i == ReadAhead::kChunk * 3 + 100) text += "{\"at\":1,\"op\":\"market\",\"id\":\n";  // cut short
  }
  Feed f;
  f.path = dir.file("feed.jsonl");
  test::write_file(f.path, text);
  Engine direct;
  for (auto& r : recs) direct.apply(std::move(r));
  direct.commit();
  f.want_digest = state_digest(*direct.current());
  f.records = n;
  return f;
}

TEST(ReplaySource, AtMaxSpeedEveryRecordReachesTheEngineOnceInFileOrder) {
  test::TempDir dir;
  const Feed f = write_feed(dir);
  for (size_t batch : {1, 256}) {
    Engine engine;
    Pipeline pipeline(engine, batch);
    pipeline.start();
    ReplaySource source(f.path, 0, pipeline);
    source.start();
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!source.status().done && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    ASSERT_TRUE(source.status().done) << "the replay never ended";
    source.stop();
    pipeline.stop();
    EXPECT_EQ(source.status().records.load(), f.records);
    EXPECT_EQ(source.status().malformed.load(), 1u);
    EXPECT_TRUE(source.status().error.empty()) << source.status().error;
    EXPECT_EQ(engine.applied() + engine.skipped(), f.records);
    EXPECT_EQ(engine.current()->seq, engine.applied());
    EXPECT_EQ(state_digest(*engine.current()), f.want_digest) << "batch " << batch;
  }
}

// Stopped part-way (the read-ahead blocked on a full queue of chunks, the
// source maybe inside a push), the replay ends promptly and what it
// counted is what the engine got.
TEST(ReplaySource, StoppedPartWayItCountsWhatItHandedOver) {
  test::TempDir dir;
  const Feed f = write_feed(dir);
  Engine engine;
  Pipeline pipeline(engine, 64);
  pipeline.start();
  ReplaySource source(f.path, 0, pipeline);
  source.start();
  while (engine.applied() == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
  source.stop();
  ASSERT_TRUE(source.status().done);
  pipeline.stop();
  EXPECT_EQ(engine.applied() + engine.skipped(), source.status().records.load());
  EXPECT_LE(source.status().records.load(), f.records);
}

}  // namespace
}  // namespace oddsrelay
