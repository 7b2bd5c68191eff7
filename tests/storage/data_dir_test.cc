// The data dir as a whole: compaction keeps the state while the files stay
// bounded, a restart replays only the tail after the newest snapshot, a
// corrupt newest snapshot falls back to the older one, the epoch stays, and
// a hole in the log stops the start rather than serving a wrong state.
#include "engine/storage/data_dir.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "engine/core/state_digest.h"
#include "engine/storage/log_writer.h"
#include "engine/storage/snapshot_file.h"
#include "tests/test_util.h"

namespace oddsrelay {
namespace {

struct Written {
  uint64_t digest = 0;
  std::string epoch;
};

// Recovers `dir`, then appends `recs` in batches of 100 through LogWriter
// with a snapshot every `every` records, waiting for each snapshot so that
// the run does not depend on the compactor's speed.
Written run(const std::string& dir, std::vector<feed::Record> recs, uint64_t every) {
  Engine e;
  DataDirRecovery rec = recover_data_dir(dir, e);
  LogOptions lo;
  lo.snapshot_records = every;
  lo.snapshot_seconds = 1 << 30;
  LogWriter w(dir, lo);
  std::string err;
  EXPECT_TRUE(w.open(rec, err)) << err;
  for (size_t i = 0; i < recs.size(); i += 100) {
    for (size_t k = i; k < std::min(recs.size(), i + 100); ++k) e.apply(std::move(recs[k]));
    BatchPtr b = e.seal();
    w.append(*b);
    e.publish(b);
    // A snapshot handed over now is written before the next batch (bounded
    // wait; the assertions catch one that never comes).
    for (int spin = 0; spin < 100000 && w.compacting(); ++spin) usleep(100);
  }
  w.close();
  return {state_digest(*e.current()), e.current()->epoch};
}

TEST(DataDir, CompactionBoundsTheFilesAndKeepsTheState) {
  test::TempDir dir;
  Written w = run(dir.path(), test::sim_records(10000, 5, 50, 50), 1000);
  DataDirFiles f = list_data_dir(dir.path());
  EXPECT_EQ(f.snapshots.size(), 2u) << "the newest snapshot and one to fall back on";
  ASSERT_FALSE(f.snapshots.empty());
  EXPECT_EQ(f.snapshots.back(), 10000u);
  // Only the segments after the older snapshot are left.
  ASSERT_FALSE(f.segments.empty());
  EXPECT_EQ(f.segments.front(), f.snapshots.front() + 1);
  EXPECT_EQ(f.epoch, w.epoch);

  Engine e;
  DataDirRecovery r = recover_data_dir(dir.path(), e);
  EXPECT_EQ(r.snapshot_seq, 10000u);
  EXPECT_EQ(r.replayed, 0u);
  EXPECT_EQ(r.seq, 10000u);
  EXPECT_EQ(e.current()->seq, 10000u);
  EXPECT_EQ(state_digest(*e.current()), w.digest);
}

TEST(DataDir, RestartReplaysOnlyTheTailAndContinuesTheLog) {
  test::TempDir dir;
  auto all = test::sim_records(6500, 5, 50, 50);
  std::vector<feed::Record> first(all.begin(), all.begin() + 5050), second(all.begin() + 5050, all.end());
  Written w1 = run(dir.path(), first, 1000);
  Engine mid;
  DataDirRecovery r = recover_data_dir(dir.path(), mid);
  EXPECT_EQ(r.seq, 5050u);
  EXPECT_EQ(r.snapshot_seq, 5000u);
  EXPECT_EQ(r.replayed, 50u);
  EXPECT_EQ(state_digest(*mid.current()), w1.digest);

  Written w2 = run(dir.path(), second, 1000);
  EXPECT_EQ(w2.epoch, w1.epoch) << "the epoch names the log: it never changes";
  Engine whole;
  whole.set_epoch(w1.epoch);
  for (auto& rec : test::sim_records(6500, 5, 50, 50)) whole.apply(std::move(rec));
  whole.commit();
  Engine e;
  DataDirRecovery r2 = recover_data_dir(dir.path(), e);
  EXPECT_EQ(r2.seq, 6500u);
  EXPECT_EQ(state_digest(*e.current()), state_digest(*whole.current()));
  EXPECT_EQ(dump_state(*e.current()), dump_state(*whole.current()));
}

TEST(DataDir, CorruptNewestSnapshotFallsBackToTheOlderOne) {
  test::TempDir dir;
  Written w = run(dir.path(), test::sim_records(5000, 5, 50, 50), 1000);
  DataDirFiles f = list_data_dir(dir.path());
  ASSERT_EQ(f.snapshots.size(), 2u);
  const std::string newest = snapshot_path(dir.path(), f.snapshots.back());
  std::string data = test::read_file(newest);
  data[data.size() / 2] ^= 0x20;
  test::write_file(newest, data);

  Engine e;
  DataDirRecovery r = recover_data_dir(dir.path(), e);
  ASSERT_EQ(r.skipped_snapshots.size(), 1u);
  EXPECT_NE(r.skipped_snapshots[0].find(newest), std::string::npos);
  EXPECT_EQ(r.snapshot_seq, f.snapshots.front());
  EXPECT_EQ(r.replayed, 5000u - f.snapshots.front());
  EXPECT_EQ(r.seq, 5000u);
  EXPECT_EQ(state_digest(*e.current()), w.digest);
}

TEST(DataDir, NewDirsGetNewEpochs) {
  test::TempDir a, b;
  Engine ea, eb;
  DataDirRecovery ra = recover_data_dir(a.path() + "/d", ea);
  DataDirRecovery rb = recover_data_dir(b.path() + "/d", eb);
  EXPECT_TRUE(ra.created);
  EXPECT_FALSE(ra.epoch.empty());
  EXPECT_NE(ra.epoch, rb.epoch);
  EXPECT_EQ(ea.current()->epoch, ra.epoch);
  EXPECT_EQ(ea.current()->seq, 0u);
  Engine again;
  EXPECT_EQ(recover_data_dir(a.path() + "/d", again).epoch, ra.epoch);
}

TEST(DataDir, AHoleInTheLogStopsTheStart) {
  test::TempDir dir;
  run(dir.path(), test::sim_records(3000, 5, 50, 50), 1'000'000);  // no snapshot: one segment from 1
  // A second segment that does not follow the first.
  Engine e;
  DataDirFiles f = list_data_dir(dir.path());
  ASSERT_EQ(f.segments.size(), 1u);
  test::write_file(segment_path(dir.path(), 3500), test::read_file(segment_path(dir.path(), 1)));
  auto error_of = [&](Engine& eng) {
    try {
      recover_data_dir(dir.path(), eng);
    } catch (const std::runtime_error& x) {
      return std::string(x.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of(e).find("ends at 3000 but the next starts at 3500"), std::string::npos) << error_of(e);
  // And a dir whose first segment is gone with no snapshot to cover it.
  ASSERT_EQ(unlink(segment_path(dir.path(), 1).c_str()), 0);
  Engine e2;
  EXPECT_NE(error_of(e2).find("has a gap before position 3500"), std::string::npos) << error_of(e2);
}

TEST(DataDir, SnapshotsOfAnotherLogAreNeverLoaded) {
  test::TempDir dir;
  run(dir.path(), test::sim_records(5000, 5, 50, 50), 1000);
  DataDirFiles f = list_data_dir(dir.path());
  ASSERT_EQ(f.snapshots.size(), 2u);
  ASSERT_GT(f.segments.front(), 1u) << "the journal before the older snapshot is gone";
  // The dir now claims another log: its snapshots are not of it.
  test::write_file(epoch_path(dir.path()), "0123456789ab\n");
  Engine e;
  std::string why = "no error";
  try {
    recover_data_dir(dir.path(), e);
  } catch (const std::runtime_error& x) {
    why = x.what();
  }
  // Nothing of this log covers its first records: the start stops rather
  // than serve another log's state under this log's name.
  EXPECT_NE(why.find("has a gap before position"), std::string::npos) << why;
}

TEST(DataDir, ReadOnlyRecoveryChangesNothing) {
  test::TempDir dir;
  Engine e;
  EXPECT_THROW(recover_data_dir(dir.path() + "/none", e, true), std::runtime_error);
  EXPECT_NE(access((dir.path() + "/none").c_str(), F_OK), 0);
}

}  // namespace
}  // namespace oddsrelay
