#include "engine/storage/feed_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "engine/core/state_digest.h"
#include "protocol/feed_writer.h"
#include "tests/test_util.h"

namespace oddsrelay {

namespace {
const char* kGood = R"({"at":1,"op":"remove","id":"5"})";

// Writes the records through the real capture sink (gzip when the name ends
// in .gz), in batches of 100; returns the state after the last batch.
SnapshotPtr write_feed(const std::string& path, std::vector<feed::Record> recs) {
  Engine e;
  FeedFileWriter w(FeedFileWriter::Options{false, 0});
  std::string err;
  EXPECT_TRUE(w.open(path, err)) << err;
  for (size_t i = 0; i < recs.size(); ++i) {
    e.apply(std::move(recs[i]));
    if ((i + 1) % 100 == 0 || i + 1 == recs.size()) w.on_batch(e.commit());
  }
  w.close();
  EXPECT_EQ(w.written(), e.applied());
  return e.current();
}

// Every record of a file, re-encoded: what was read, field by field.
std::vector<std::string> encoded_records(const std::string& path) {
  FeedFileReader r;
  std::string err;
  EXPECT_TRUE(r.open(path, err)) << err;
  std::vector<std::string> out;
  feed::Record rec;
  while (r.next(rec)) {
    out.emplace_back();
    feed::write_record(rec, out.back());
  }
  return out;
}

}  // namespace

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

// A scripted or live feed written into a FIFO: each record is read when its
// line is written, not when a megabyte follows it (zlib fills its whole
// buffer before a read returns), and the end of the writer is the end.
TEST(FeedFileReader, AFifoGivesEachLineAsSoonAsItIsWritten) {
  test::TempDir dir;
  const std::string path = dir.file("feed.fifo");
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  std::atomic<int> read{0};
  std::atomic<int> held_back{0};  // records the writer waited 5 s for
  std::thread writer([&] {
    int fd = ::open(path.c_str(), O_WRONLY);
    for (int i = 0; i < 3; ++i) {
      const std::string line = "{\"at\":" + std::to_string(i) + R"(,"op":"remove","id":"5"})" + "\n";
      (void)!::write(fd, line.data(), line.size());
      // The pipe stays open until the record is read: a reader that waits
      // for more makes the writer give up after 5 s, rather than hang.
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (read.load() <= i && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (read.load() <= i) ++held_back;
    }
    ::close(fd);
  });
  FeedFileReader r;
  std::string err;
  ASSERT_TRUE(r.open(path, err)) << err;
  feed::Record rec;
  std::vector<int64_t> ats;
  while (r.next(rec)) {
    ats.push_back(rec.at);
    read = static_cast<int>(ats.size());
  }
  writer.join();
  EXPECT_EQ(ats, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(held_back.load(), 0) << "a record was read only when more followed it";
  EXPECT_TRUE(r.fatal().empty()) << r.fatal();
}

// gzip needs a file: through a pipe it would be held back as above, so it
// is refused with a reason rather than read late.
TEST(FeedFileReader, GzipThroughAPipeIsRefusedWithAReason) {
  test::TempDir dir;
  gzFile f = gzopen(dir.file("f.jsonl.gz").c_str(), "wb");
  gzprintf(f, "%s\n", kGood);
  gzclose(f);
  const std::string path = dir.file("feed.fifo");
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  std::thread writer([&] {
    const std::string gz = test::read_file(dir.file("f.jsonl.gz"));
    int fd = ::open(path.c_str(), O_WRONLY);
    (void)!::write(fd, gz.data(), gz.size());
    ::close(fd);
  });
  FeedFileReader r;
  std::string err;
  ASSERT_TRUE(r.open(path, err)) << err;
  feed::Record rec;
  EXPECT_FALSE(r.next(rec));
  writer.join();
  EXPECT_NE(r.fatal().find("gzip"), std::string::npos) << r.fatal();
}

TEST(FeedFileReader, GzipAndPlainGiveTheSameRecordsAndState) {
  test::TempDir dir;
  const auto recs = test::sim_records(1500, 4);
  SnapshotPtr written = write_feed(dir.file("f.jsonl"), recs);
  write_feed(dir.file("f.jsonl.gz"), recs);
  std::vector<std::string> want;
  for (const auto& r : recs) feed::write_record(r, want.emplace_back());
  EXPECT_EQ(encoded_records(dir.file("f.jsonl")), want);
  EXPECT_EQ(encoded_records(dir.file("f.jsonl.gz")), want);
  SnapshotPtr plain = test::replay_file(dir.file("f.jsonl"));
  SnapshotPtr gz = test::replay_file(dir.file("f.jsonl.gz"));
  EXPECT_TRUE(test::same_state(*gz, *plain));
  EXPECT_TRUE(test::same_state(*plain, *written));
  // The comparison can tell: one record less is another state.
  SnapshotPtr short_one = test::replay_file(dir.file("f.jsonl.gz"), recs.size() - 1);
  EXPECT_NE(state_digest(*short_one), state_digest(*plain));
  EXPECT_NE(test::state_summary(*short_one), test::state_summary(*plain));
}

TEST(FeedFileReader, TornTailGivesTheStateOfTheIntactPrefix) {
  test::TempDir dir;
  const auto recs = test::sim_records(600, 5);
  const std::string path = dir.file("f.jsonl");
  SnapshotPtr full = write_feed(path, recs);
  std::string data = test::read_file(path);
  const size_t last_line = data.rfind('\n', data.size() - 2) + 1;
  data.resize(last_line + (data.size() - last_line) / 2);  // a crash mid-write
  test::write_file(path, data);
  FeedFileReader r;
  std::string err;
  ASSERT_TRUE(r.open(path, err)) << err;
  feed::Record rec;
  Engine e;
  while (r.next(rec)) e.apply(std::move(rec));
  e.commit();
  EXPECT_EQ(e.applied(), recs.size() - 1);
  EXPECT_TRUE(r.stats().torn_tail);
  EXPECT_EQ(r.good_end(), last_line);
  SnapshotPtr prefix = write_feed(dir.file("prefix.jsonl"), {recs.begin(), recs.end() - 1});
  EXPECT_TRUE(test::same_state(*e.current(), *prefix));
  EXPECT_NE(state_digest(*e.current()), state_digest(*full));
  EXPECT_NE(test::state_summary(*e.current()), test::state_summary(*full));
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
  test::write_file(dir.file("f"),
                   std::string(R"({"op":"header","format":"oddsfeed","version":9})") + "\n" + kGood + "\n");
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
