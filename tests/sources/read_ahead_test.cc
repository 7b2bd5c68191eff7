// The read-ahead hands out every record of a feed file in file order, in
// chunks, ends cleanly, and can be stopped part-way without hanging.
#include "engine/sources/read_ahead.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "protocol/feed_writer.h"
#include "tests/test_util.h"

namespace oddsrelay {
namespace {

std::string write_sim_feed(const test::TempDir& dir, size_t n) {
  std::string text = "{\"op\":\"header\",\"format\":\"oddsfeed\",\"version\":1}\n";
  for (const auto& r : test::sim_records(n)) {
    std::string line;
    feed::write_record(r, line);
    text += line + "\n";
  }
  const std::string path = dir.file("feed.jsonl");
  test::write_file(path, text);
  return path;
}

TEST(ReadAhead, EveryRecordInFileOrder) {
  test::TempDir dir;
  const size_t kRecords = ReadAhead::kChunk * 40 + 17;  // more than the read-ahead holds, a partial last chunk
  const std::string path = write_sim_feed(dir, kRecords);
  FeedFileReader direct, ahead_reader;
  std::string err;
  ASSERT_TRUE(direct.open(path, err)) << err;
  ASSERT_TRUE(ahead_reader.open(path, err)) << err;
  ReadAhead ahead(ahead_reader);
  std::vector<feed::Record> chunk;
  size_t n = 0, chunks = 0;
  while (ahead.next(chunk)) {
    ++chunks;
    EXPECT_LE(chunk.size(), ReadAhead::kChunk);
    for (const auto& r : chunk) {
      feed::Record want;
      ASSERT_TRUE(direct.next(want)) << "record " << n;
      std::string a, b;
      feed::write_record(r, a);
      feed::write_record(want, b);
      ASSERT_EQ(a, b) << "record " << n;
      ++n;
    }
  }
  feed::Record extra;
  EXPECT_FALSE(direct.next(extra));
  EXPECT_EQ(n, kRecords);
  EXPECT_EQ(chunks, 41u);
  EXPECT_FALSE(ahead.next(chunk));  // stays at the end
  ahead.finish();
  EXPECT_EQ(ahead_reader.stats().records, kRecords);
}

TEST(ReadAhead, FinishPartWayStopsTheReader) {
  test::TempDir dir;
  const std::string path = write_sim_feed(dir, ReadAhead::kChunk * 64);
  FeedFileReader reader;
  std::string err;
  ASSERT_TRUE(reader.open(path, err)) << err;
  ReadAhead ahead(reader);
  std::vector<feed::Record> chunk;
  ASSERT_TRUE(ahead.next(chunk));
  EXPECT_EQ(chunk.size(), ReadAhead::kChunk);
  ahead.finish();  // returns although the reader is blocked on a full read-ahead
  EXPECT_FALSE(ahead.next(chunk));
  EXPECT_LT(reader.stats().records, ReadAhead::kChunk * 64);  // it never read the whole file
}

}  // namespace
}  // namespace oddsrelay
