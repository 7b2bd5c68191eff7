// The journal through the data dir: what LogWriter appends, recovery
// replays; torn tails are cut, corrupt middles skipped with their positions
// kept. Snapshots and compaction: snapshot_file_test.cc, data_dir_test.cc.
#include "engine/storage/journal.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "engine/core/state_digest.h"
#include "engine/storage/data_dir.h"
#include "engine/storage/log_writer.h"
#include "protocol/feed_reader.h"
#include "protocol/feed_writer.h"
#include "tests/test_util.h"

namespace oddsrelay {

namespace {

// Applies the records in order, committing every `batch` records.
SnapshotPtr apply_records(const std::vector<feed::Record>& recs, size_t batch = 256) {
  Engine e;
  for (size_t i = 0; i < recs.size(); ++i) {
    e.apply(feed::Record(recs[i]));
    if ((i + 1) % batch == 0) e.commit();
  }
  e.commit();
  return e.current();
}

// Appends the records to the data dir `dir` through the real LogWriter (no
// snapshots), in batches of 50, after recovering what it holds; returns the
// state after every batch.
std::vector<SnapshotPtr> write_journal(const std::string& dir, std::vector<feed::Record> recs) {
  Engine e;
  DataDirRecovery rec = recover_data_dir(dir, e);
  LogOptions lo;
  lo.snapshot_records = UINT64_MAX / 2;
  lo.snapshot_seconds = 1 << 30;
  LogWriter w(dir, lo);
  std::string err;
  EXPECT_TRUE(w.open(rec, err)) << err;
  std::vector<SnapshotPtr> states;
  for (size_t i = 0; i < recs.size(); ++i) {
    e.apply(std::move(recs[i]));
    if ((i + 1) % 50 == 0 || i + 1 == recs.size()) {
      BatchPtr b = e.seal();
      w.append(*b);
      e.publish(b);
      states.push_back(e.current());
    }
  }
  w.close();
  return states;
}

// The one journal segment of a dir that never took a snapshot.
std::string only_segment(const std::string& dir) {
  DataDirFiles f = list_data_dir(dir);
  EXPECT_EQ(f.segments.size(), 1u);
  return segment_path(dir, f.segments.empty() ? 1 : f.segments.front());
}

}  // namespace

TEST(Journal, RestartRestoresTheSameState) {
  test::TempDir dir;
  auto states = write_journal(dir.path(), test::sim_records(2000));
  ASSERT_EQ(states.size(), 40u);
  Engine e;
  DataDirRecovery r = recover_data_dir(dir.path(), e);
  EXPECT_EQ(r.replayed, 2000u);
  EXPECT_EQ(r.seq, 2000u);
  EXPECT_EQ(e.current()->seq, 2000u);
  EXPECT_EQ(r.bad_records, 0u);
  EXPECT_FALSE(r.torn_tail);
  EXPECT_FALSE(r.created);
  EXPECT_EQ(e.current()->epoch, r.epoch);
  EXPECT_EQ(e.applied(), 2000u);
  EXPECT_EQ(e.skipped(), 0u);
  EXPECT_TRUE(test::same_state(*e.current(), *states.back()));
  // The comparison can tell: one batch (50 records) less is another state.
  EXPECT_NE(state_digest(*e.current()), state_digest(*states[states.size() - 2]));
  EXPECT_NE(test::state_summary(*e.current()), test::state_summary(*states[states.size() - 2]));
}

// Records keep the line they were read from, and the journal writes that
// line back with its checksum: a feed line with whitespace (a tab) after its
// object must come back from the journal as the same record, not as a
// corrupt line that a restart skips (it once did: the state after the
// restart lost those records).
TEST(Journal, LinesReadWithTrailingWhitespaceComeBackWhole) {
  test::TempDir dir;
  std::vector<feed::Record> read;
  feed::FeedParser p;
  p.keep_text(true);
  for (const feed::Record& r : test::sim_records(600)) {
    std::string line;
    feed::write_record(r, line);
    feed::Record back;
    ASSERT_EQ(p.parse(line + (read.size() % 2 ? "\t" : " \t \r"), back), feed::LineStatus::Record) << p.error();
    ASSERT_FALSE(back.text.empty());
    // Every third record without its line (as the simulator's come): the
    // journal encodes it, between lines it writes as read.
    if (read.size() % 3 == 0) back.text.clear();
    read.push_back(std::move(back));
  }
  auto states = write_journal(dir.path(), read);
  Engine e;
  DataDirRecovery r = recover_data_dir(dir.path(), e);
  EXPECT_EQ(r.bad_records, 0u);
  EXPECT_EQ(r.replayed, 600u);
  EXPECT_TRUE(test::same_state(*e.current(), *states.back()));
}

TEST(Journal, TornTailIsDroppedNeverHalfApplied) {
  test::TempDir dir;
  auto recs = test::sim_records(1000);
  // The state before the last record: what a restart after a torn last write must give.
  SnapshotPtr before = apply_records({recs.begin(), recs.end() - 1});
  SnapshotPtr full = write_journal(dir.path(), recs).back();
  // ... and the last record makes a difference that shows.
  ASSERT_NE(state_digest(*before), state_digest(*full));
  ASSERT_NE(test::state_summary(*before), test::state_summary(*full));
  std::string path = only_segment(dir.path());
  std::string data = test::read_file(path);
  size_t last_line = data.rfind('\n', data.size() - 2) + 1;
  size_t cut = last_line + (data.size() - last_line) / 2;  // mid-record
  ASSERT_EQ(truncate(path.c_str(), static_cast<off_t>(cut)), 0);

  Engine e;
  DataDirRecovery r = recover_data_dir(dir.path(), e);
  EXPECT_EQ(r.replayed, 999u);
  EXPECT_EQ(r.seq, 999u);
  EXPECT_TRUE(r.torn_tail);
  EXPECT_EQ(r.truncated_bytes, cut - last_line);
  EXPECT_EQ(e.applied(), 999u);
  EXPECT_TRUE(test::same_state(*e.current(), *before));
  EXPECT_NE(state_digest(*e.current()), state_digest(*full));
  // The file now ends at the last intact record, so appends follow it cleanly.
  EXPECT_EQ(test::read_file(path).size(), last_line);
  auto all = test::sim_records(1100);
  write_journal(dir.path(), {all.begin() + 999, all.end()});
  Engine again;
  DataDirRecovery r2 = recover_data_dir(dir.path(), again);
  EXPECT_EQ(r2.replayed, 1100u);
  EXPECT_EQ(r2.seq, 1100u);
  EXPECT_EQ(r2.bad_records, 0u);
  EXPECT_FALSE(r2.torn_tail);
  // The re-sent record and those after it follow the intact prefix exactly.
  EXPECT_TRUE(test::same_state(*again.current(), *apply_records(all)));
}

TEST(Journal, CorruptRecordInTheMiddleIsSkippedAndReported) {
  test::TempDir dir;
  auto recs = test::sim_records(300);
  SnapshotPtr full = write_journal(dir.path(), recs).back();
  std::string path = only_segment(dir.path());
  std::string data = test::read_file(path);
  size_t p = data.find("\"op\":\"market\"", data.size() / 2);
  ASSERT_NE(p, std::string::npos);
  // Line 0 is the header: the corrupt line holds record `bad`.
  const size_t bad = static_cast<size_t>(std::count(data.begin(), data.begin() + static_cast<ptrdiff_t>(p), '\n')) - 1;
  recs.erase(recs.begin() + static_cast<ptrdiff_t>(bad));
  data[p + 7] = 'M';  // flip one byte: the checksum no longer matches
  test::write_file(path, data);
  Engine e;
  DataDirRecovery r = recover_data_dir(dir.path(), e);
  EXPECT_EQ(r.replayed, 299u);
  EXPECT_EQ(r.bad_records, 1u);
  EXPECT_EQ(r.seq, 300u) << "the lost record keeps its position";
  EXPECT_FALSE(r.torn_tail);
  // Exactly that record is missing, nothing of it applied, the rest intact.
  EXPECT_TRUE(test::same_state(*e.current(), *apply_records(recs)));
  EXPECT_NE(state_digest(*e.current()), state_digest(*full));
}

TEST(Journal, UnusableDataDirThrowsAtStartUp) {
  Engine e;
  EXPECT_THROW(recover_data_dir("/proc/oddsrelay-no-such-dir/x", e), std::runtime_error);
}

}  // namespace oddsrelay
