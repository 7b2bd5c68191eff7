#include "engine/storage/feed_file.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include "tests/test_util.h"

namespace oddsrelay {

namespace {
const char* kGood = R"({"at":1,"op":"remove","id":"5"})";
}

TEST(FeedFileReader, ReportsBadLinesByNumberAndKeepsTheRest) {
  test::TempDir dir;
  std::string body = std::string(R"({"op":"header","format":"oddsfeed","version":1,"provider":"s7"})") + "\n" + kGood +
                     "\n{broken\n" + kGood + "\n" + R"({"at":2,"op":"dance","id":"5"})" + "\n\n" +
                     R"({"at":"x","op":"remove","id":"5"})" + "\n" + kGood + "\n";
  test::write_file(dir.file("f.jsonl"), body);
  FeedFileReader r;
  std::string err;
  ASSERT_TRUE(r.open(dir.file("f.jsonl"), err)) << err;
  std::vector<uint64_t> bad_lines;
  r.on_problem([&](uint64_t line, feed::LineStatus, const std::string&) { bad_lines.push_back(line); });
  feed::Record rec;
  int n = 0;
  while (r.next(rec)) ++n;
  EXPECT_EQ(n, 3);
  EXPECT_EQ(bad_lines, (std::vector<uint64_t>{3, 7}));
  EXPECT_EQ(r.stats().malformed, 2u);
  EXPECT_EQ(r.stats().unknown_ops, 1u);
  EXPECT_FALSE(r.stats().torn_tail);
  EXPECT_EQ(r.good_end(), body.size());
}

TEST(FeedFileReader, ReadsGzip) {
  test::TempDir dir;
  gzFile f = gzopen(dir.file("f.jsonl.gz").c_str(), "wb");
  for (int i = 0; i < 1000; ++i) gzprintf(f, "{\"at\":%d,\"op\":\"remove\",\"id\":\"%d\"}\n", i, i + 1);
  gzclose(f);
  FeedFileReader r;
  std::string err;
  ASSERT_TRUE(r.open(dir.file("f.jsonl.gz"), err));
  feed::Record rec;
  int n = 0;
  while (r.next(rec)) EXPECT_EQ(rec.at, n++);
  EXPECT_EQ(n, 1000);
}

TEST(FeedFileReader, TornLastLineIsNotARecord) {
  test::TempDir dir;
  test::write_file(dir.file("f"), std::string(kGood) + "\n" + kGood);  // no final newline
  FeedFileReader r;
  std::string err;
  ASSERT_TRUE(r.open(dir.file("f"), err));
  feed::Record rec;
  int n = 0;
  while (r.next(rec)) ++n;
  EXPECT_EQ(n, 1);
  EXPECT_TRUE(r.stats().torn_tail);
  EXPECT_EQ(r.good_end(), std::string(kGood).size() + 1);
}

TEST(FeedFileReader, StopsAtUnsupportedVersion) {
  test::TempDir dir;
  test::write_file(dir.file("f"), std::string(R"({"op":"header","format":"oddsfeed","version":9})") + "\n" + kGood + "\n");
  FeedFileReader r;
  std::string err;
  ASSERT_TRUE(r.open(dir.file("f"), err));
  feed::Record rec;
  EXPECT_FALSE(r.next(rec));
  EXPECT_NE(r.fatal().find("version 9"), std::string::npos);
}

TEST(FeedFileReader, MissingFileIsAClearError) {
  FeedFileReader r;
  std::string err;
  EXPECT_FALSE(r.open("/nonexistent/feed.jsonl", err));
  EXPECT_NE(err.find("/nonexistent/feed.jsonl"), std::string::npos);
}

}  // namespace oddsrelay
