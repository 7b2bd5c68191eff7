// The journal through the data dir: what LogWriter appends, recovery
// replays; torn tails are cut, corrupt middles skipped with their positions
// kept. Snapshots and compaction: snapshot_file_test.cc, data_dir_test.cc.
#include "engine/storage/journal.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "engine/state_digest.h"
#include "engine/storage/data_dir.h"
#include "engine/storage/log_writer.h"
#include "tests/test_util.h"
#include "tools/sources/simulator.h"

namespace oddsrelay {

namespace {

std::vector<feed::Record> sim_records(size_t n, uint64_t seed = 11) {
  sim::Simulator sim(sim::SimOptions{seed, 60, 1000, 200});
  std::vector<feed::Record> out;
  sim.open(1'000'000, 1'000'000, out);
  while (out.size() < n) sim.step(sim.now(), out);
  out.resize(n);
  return out;
}

// Appends the records to the data dir `dir` through the real LogWriter (no
// snapshots), in batches of 50, after recovering what it holds; returns the
// digest after every batch.
std::vector<uint64_t> write_journal(const std::string& dir, std::vector<feed::Record> recs) {
  Engine e;
  DataDirRecovery rec = recover_data_dir(dir, e);
  LogOptions lo;
  lo.snapshot_records = UINT64_MAX / 2;
  lo.snapshot_seconds = 1 << 30;
  LogWriter w(dir, lo);
  std::string err;
  EXPECT_TRUE(w.open(rec, err)) << err;
  std::vector<uint64_t> digests;
  for (size_t i = 0; i < recs.size(); ++i) {
    e.apply(std::move(recs[i]));
    if ((i + 1) % 50 == 0 || i + 1 == recs.size()) {
      BatchPtr b = e.seal();
      w.append(*b);
      e.publish(b);
      digests.push_back(state_digest(*e.current()));
    }
  }
  w.close();
  return digests;
}

std::string only_segment(const std::string& dir) {
  DataDirFiles f = list_data_dir(dir);
  EXPECT_EQ(f.segments.size(), 1u);
  return segment_path(dir, f.segments.empty() ? 1 : f.segments.front());
}

}  // namespace

TEST(Journal, RestartRestoresTheSameState) {
  test::TempDir dir;
  auto digests = write_journal(dir.path(), sim_records(2000));
  Engine e;
  DataDirRecovery r = recover_data_dir(dir.path(), e);
  EXPECT_EQ(r.replayed, 2000u);
  EXPECT_EQ(r.seq, 2000u);
  EXPECT_EQ(e.current()->seq, 2000u);
  EXPECT_EQ(r.bad_records, 0u);
  EXPECT_FALSE(r.torn_tail);
  EXPECT_FALSE(r.created);
  EXPECT_EQ(e.current()->epoch, r.epoch);
  EXPECT_EQ(state_digest(*e.current()), digests.back());
}

TEST(Journal, TornTailIsDroppedNeverHalfApplied) {
  test::TempDir dir;
  auto recs = sim_records(1000);
  // The state before the last record: what a restart after a torn last write must give.
  Engine before;
  for (size_t i = 0; i + 1 < recs.size(); ++i) before.apply(feed::Record(recs[i]));
  before.commit();
  write_journal(dir.path(), recs);
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
  EXPECT_EQ(state_digest(*e.current()), state_digest(*before.current()));
  // The file now ends at the last intact record, so appends follow it cleanly.
  EXPECT_EQ(test::read_file(path).size(), last_line);
  auto more = sim_records(1100);
  more.erase(more.begin(), more.begin() + 999);
  write_journal(dir.path(), std::move(more));
  Engine again;
  DataDirRecovery r2 = recover_data_dir(dir.path(), again);
  EXPECT_EQ(r2.replayed, 1100u);
  EXPECT_EQ(r2.seq, 1100u);
  EXPECT_EQ(r2.bad_records, 0u);
}

TEST(Journal, CorruptRecordInTheMiddleIsSkippedAndReported) {
  test::TempDir dir;
  write_journal(dir.path(), sim_records(300));
  std::string path = only_segment(dir.path());
  std::string data = test::read_file(path);
  size_t p = data.find("\"op\":\"market\"", data.size() / 2);
  ASSERT_NE(p, std::string::npos);
  data[p + 7] = 'M';  // flip one byte: the checksum no longer matches
  test::write_file(path, data);
  Engine e;
  DataDirRecovery r = recover_data_dir(dir.path(), e);
  EXPECT_EQ(r.replayed, 299u);
  EXPECT_EQ(r.bad_records, 1u);
  EXPECT_EQ(r.seq, 300u) << "the lost record keeps its position";
  EXPECT_FALSE(r.torn_tail);
}

TEST(Journal, UnusableDataDirThrowsAtStartUp) {
  Engine e;
  EXPECT_THROW(recover_data_dir("/proc/oddsrelay-no-such-dir/x", e), std::runtime_error);
}

}  // namespace oddsrelay
