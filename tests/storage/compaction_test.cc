// Compaction keeps the data dir flat: the journal a cycle adds is bounded
// by a share of the snapshot (--snapshot-journal), so the dir (two
// snapshots and the journal since the older) stays within a tenth of its
// mean; the older snapshot goes at the new one's rename, and a new snapshot
// a power loss left under its .tmp name is recovered, so deleting early
// never leaves a restart without a snapshot to fall back on.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "engine/core/state_digest.h"
#include "engine/storage/data_dir.h"
#include "engine/storage/log_writer.h"
#include "engine/storage/snapshot_file.h"
#include "tests/test_util.h"

namespace oddsrelay {
namespace {

uint64_t size_of(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

struct DirSize {
  uint64_t snapshots = 0, journal = 0;
  uint64_t total() const { return snapshots + journal; }
};

DirSize dir_size(const std::string& dir) {
  DataDirFiles f = list_data_dir(dir);
  DirSize d;
  for (uint64_t s : f.snapshots) d.snapshots += size_of(snapshot_path(dir, s));
  for (uint64_t s : f.segments) d.journal += size_of(segment_path(dir, s));
  return d;
}

constexpr uint64_t kMin = 16 << 10;  // snapshot_min_bytes: small, so the share is the bound soon

// Appends `recs` in batches of 50 through a LogWriter with the record
// trigger out of the way and the journal share at `pct`, and calls `each`
// after every batch. The test does not wait for the compactor: the bound
// must hold at whatever pace it writes.
template <class F>
uint64_t run(const std::string& dir, std::vector<feed::Record> recs, uint32_t pct, F&& each) {
  Engine e;
  DataDirRecovery rec = recover_data_dir(dir, e);
  LogOptions lo;
  lo.snapshot_records = UINT64_MAX;
  lo.snapshot_seconds = 1 << 30;
  lo.snapshot_journal_pct = pct;
  lo.snapshot_min_bytes = kMin;
  LogWriter w(dir, lo);
  std::string err;
  EXPECT_TRUE(w.open(rec, err)) << err;
  for (size_t i = 0; i < recs.size(); i += 50) {
    for (size_t k = i; k < std::min(recs.size(), i + 50); ++k) e.apply(std::move(recs[k]));
    BatchPtr b = e.seal();
    w.append(*b);
    e.publish(b);
    each(w);
  }
  w.close();
  return state_digest(*e.current());
}

TEST(Compaction, TheJournalACycleAddsIsBoundedByTheSnapshot) {
  test::TempDir dir;
  const uint32_t pct = 25;
  auto limit = [&](uint64_t snapshot) { return std::max(kMin, snapshot * pct / 100); };
  uint64_t max_batch = 0, last_bytes = 0, checked = 0, busy_batches = 0;
  run(dir.path(), test::sim_records(40000, 5, 50, 50), pct, [&](const LogWriter& w) {
    const uint64_t bytes = w.stats().bytes.load();
    max_batch = std::max(max_batch, bytes - last_bytes);
    last_bytes = bytes;
    // The dir between two snapshots is checked once the compactor is idle.
    // Most batches go on without waiting for it (so it lags and the writer's
    // own wait is what bounds the journal); every eighth waits, so the bound
    // is checked however slow the disk's fsync makes each snapshot.
    if (w.compacting()) {
      if (++busy_batches % 8 != 0) return;
      while (w.compacting()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    DataDirFiles f = list_data_dir(dir.path());
    if (f.snapshots.size() < 2) return;
    ASSERT_EQ(f.snapshots.size(), 2u);
    // Every segment after the older snapshot follows a snapshot and holds
    // at most the share of it (plus the batch that crossed the line, and
    // its header line).
    for (uint64_t first : f.segments) {
      ASSERT_GE(first, f.snapshots.front() + 1) << "a segment the older snapshot covers was kept";
      const uint64_t base = size_of(snapshot_path(dir.path(), first - 1));
      ASSERT_GT(base, 0u) << "segment " << first << " does not start at a snapshot";
      // (A tenth over: the writer's share was of the newest snapshot then
      // written, which may be the one before `base`, a little smaller.)
      EXPECT_LE(size_of(segment_path(dir.path(), first)), limit(base) * 11 / 10 + max_batch + 200)
          << "segment " << first << " outgrew its share of the snapshot before it";
      if (base * pct / 100 > kMin) ++checked;  // the share, not the floor, was the bound
    }
    // So the whole journal kept is at most the share of the two snapshots
    // kept: the dir is two snapshots and 0..pct/50 of one more, whose
    // middle it stays within a tenth of (docs/architecture.md "The log").
    const DirSize d = dir_size(dir.path());
    EXPECT_LE(d.journal, std::max(2 * kMin, d.snapshots * pct / 100) + 2 * (max_batch + 200))
        << "journal " << d.journal << " beside snapshots of " << d.snapshots;
  });
  ASSERT_GT(checked, 20u);
  DataDirFiles f = list_data_dir(dir.path());
  ASSERT_EQ(f.snapshots.size(), 2u);
  EXPECT_GT(f.snapshots.front(), 30000u) << "snapshots all along the run";
}

TEST(Compaction, WithoutTheShareTheJournalFollowsTheRecordsOnly) {
  // The control: the same run with the share off writes no snapshot at all
  // (the record trigger is out of the way), so the journal is the whole
  // log; the bound above is the share's doing.
  test::TempDir dir;
  run(dir.path(), test::sim_records(10000, 5, 50, 50), 0, [](const LogWriter&) {});
  DataDirFiles f = list_data_dir(dir.path());
  EXPECT_TRUE(f.snapshots.empty());
  ASSERT_EQ(f.segments.size(), 1u);
  EXPECT_EQ(f.segments.front(), 1u);
}

// A LogWriter on a fresh dir, fed the simulator's records in batches the
// test marks a catch-up's (Batch::catch_up, set by the pipeline when it is
// behind its source) or live.
class Feeder {
 public:
  explicit Feeder(LogOptions lo) : recs_(test::sim_records(40000, 5, 50, 50)) {
    DataDirRecovery rec = recover_data_dir(dir_.path(), e_);
    w_ = std::make_unique<LogWriter>(dir_.path(), lo);
    std::string err;
    EXPECT_TRUE(w_->open(rec, err)) << err;
  }
  // Appends the next `n` records as one batch; returns its journal bytes.
  uint64_t append(size_t n, bool catch_up) { return write(seal(n, catch_up)); }
  // The two halves, for a test that has the log thread lag the engine (as
  // the pipeline's does) and write batches sealed before: the next `n`
  // records applied and sealed, marked a catch-up's or live...
  BatchPtr seal(size_t n, bool catch_up) {
    for (size_t i = 0; i < n; ++i) e_.apply(std::move(recs_.at(next_++)));
    EXPECT_EQ(e_.skipped(), 0u) << "the positions below assume every record applies";
    BatchPtr b = e_.seal(0, catch_up);
    e_.publish(b);
    return b;
  }
  // ...and written; returns its journal bytes.
  uint64_t write(const BatchPtr& b) {
    const uint64_t before = w_->stats().bytes.load();
    w_->append(*b);
    return w_->stats().bytes.load() - before;
  }
  // Waits until the compactor has written what it was handed.
  void settle() const {
    while (w_->compacting()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  LogWriter& w() { return *w_; }

 private:
  test::TempDir dir_;
  Engine e_;
  std::vector<feed::Record> recs_;
  size_t next_ = 0;
  std::unique_ptr<LogWriter> w_;
};

// The positions of the snapshots written so far, with the compactor
// settled after every batch (so they do not depend on its pace).
struct Snapshots {
  std::vector<uint64_t> at;
  void note(Feeder& f) {
    f.settle();
    const uint64_t s = f.w().stats().last_snapshot_seq.load();
    if (s != 0 && (at.empty() || at.back() != s)) at.push_back(s);
  }
};

// While the pipeline is behind its source, a snapshot every
// --snapshot-every records is most of what the journal costs a replay: the
// record trigger is catch_up_factor times higher, and once batches are
// live again the normal one applies at the first of them.
TEST(Compaction, ACatchUpSnapshotsAtTheFactorAndTheFirstLiveBatchAtTheNormalBound) {
  LogOptions lo;
  ASSERT_EQ(lo.catch_up_factor, 32u);
  lo.snapshot_records = 250;  // 8,000 in a catch-up
  lo.snapshot_journal_pct = 0;
  lo.snapshot_seconds = 1 << 30;
  Feeder f(lo);
  Snapshots s;
  for (int i = 0; i < 40; ++i) {  // 20,000 records behind the source
    f.append(500, true);
    s.note(f);
  }
  EXPECT_EQ(s.at, (std::vector<uint64_t>{8000, 16000})) << "a catch-up snapshots every 32 x 250 records";
  f.append(50, false);  // caught up: 4,050 records since the last snapshot
  s.note(f);
  ASSERT_FALSE(s.at.empty());
  EXPECT_EQ(s.at.back(), 20050u) << "the first live batch applies the normal bound";
  for (int i = 0; i < 4; ++i) {
    f.append(500, false);
    s.note(f);
  }
  EXPECT_EQ(s.at, (std::vector<uint64_t>{8000, 16000, 20050, 20550, 21050, 21550, 22050})) << "live: every batch again";
}

// The journal-share trigger likewise: in a catch-up a cycle's journal
// reaches 32 times the share of the newest snapshot (the batch that
// crosses it ends the cycle); live, the share itself, exactly as before.
TEST(Compaction, ACatchUpLetsTheJournalReachTheFactorTimesItsShare) {
  const uint32_t pct = 5;
  const uint64_t min = 2 << 10;
  LogOptions lo;
  lo.snapshot_records = UINT64_MAX;
  lo.snapshot_seconds = 1 << 30;
  lo.snapshot_journal_pct = pct;
  lo.snapshot_min_bytes = min;
  Feeder f(lo);
  uint64_t cycle = 0, snapshots = 0, above_floor = 0;
  auto step = [&](size_t n, bool catch_up) {
    const uint64_t s = f.w().stats().last_snapshot_bytes.load();
    const uint64_t limit = std::max(min, s / 100 * pct) * (catch_up ? lo.catch_up_factor : 1);
    const uint64_t batch = f.append(n, catch_up);
    cycle += batch;
    f.settle();
    if (f.w().stats().snapshots.load() == snapshots) {
      ASSERT_LT(cycle, limit) << "the journal passed its bound with no snapshot";
      return;
    }
    ++snapshots;
    EXPECT_GE(cycle, limit) << "snapshot " << snapshots << " before the journal reached its bound";
    EXPECT_LT(cycle - batch, limit) << "snapshot " << snapshots << " later than the batch that crossed the bound";
    if (s / 100 * pct > min) ++above_floor;
    cycle = 0;
  };
  while (above_floor < 3) step(50, true);
  const uint64_t caught_up = snapshots;
  for (int i = 0; i < 200; ++i) step(10, false);  // a few batches a cycle
  EXPECT_GT(snapshots, caught_up + 10) << "live cycles at the normal share";
  EXPECT_LT(snapshots, caught_up + 100) << "live cycles of one batch each: the bound is not checked";
}

// A catch-up never waits for the compactor: a snapshot due while the one
// before is being written is handed over at the first batch after.
TEST(Compaction, ACatchUpNeverWaitsForTheCompactor) {
  LogOptions lo;
  lo.snapshot_records = UINT64_MAX;
  lo.snapshot_seconds = 1 << 30;
  lo.snapshot_journal_pct = 1;
  lo.snapshot_min_bytes = 4 << 10;  // a batch of 50 records passes it: due at about every third batch
  Feeder f(lo);
  for (int i = 0; i < 400; ++i) f.append(50, true);
  // On a loaded machine the first snapshot may still be being written after
  // all of that: go on, a batch every few ms, until a second is handed over
  // (records for 400 more batches: 2 s at most).
  for (int i = 0; i < 400 && f.w().stats().snapshots.load() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    f.append(50, true);
  }
  f.w().close();
  EXPECT_EQ(f.w().stats().compaction_waits.load(), 0u);
  EXPECT_GT(f.w().stats().snapshots.load(), 1u);
}

// A catch-up that passed the normal bound and ends with no batch after it
// (a replay's last records, then a quiet feed): the log thread's idle tick
// applies the normal bound with the last batch's snapshot.
TEST(Compaction, AnIdleTickAfterACatchUpAppliesTheNormalBound) {
  LogOptions lo;
  lo.snapshot_records = 1000;
  lo.snapshot_journal_pct = 0;
  lo.snapshot_seconds = 1 << 30;
  Feeder f(lo);
  Snapshots s;
  for (int i = 0; i < 6; ++i) {
    f.append(500, true);
    s.note(f);
  }
  EXPECT_TRUE(s.at.empty()) << "3,000 records are within a catch-up's bound";
  f.w().tick();
  s.note(f);
  EXPECT_EQ(s.at, std::vector<uint64_t>{3000});
  f.w().tick();  // nothing more to do
  s.note(f);
  EXPECT_EQ(s.at, std::vector<uint64_t>{3000});
}

// A live batch's snapshot that falls due while the compactor still writes
// the one before is put off (the share is off, so the log thread does not
// wait for it). With no batch after it (the feed went quiet), the log
// thread's idle tick takes it: the records it covers are not left to the
// journal until the feed's next record.
TEST(Compaction, ALiveSnapshotPutOffWhileTheCompactorIsBusyIsTakenWhenIdle) {
  LogOptions lo;
  lo.snapshot_records = 100;
  lo.snapshot_journal_pct = 0;
  lo.snapshot_seconds = 1 << 30;
  // On a busy machine (an ASan build beside another test) the compactor can
  // finish the first snapshot before the second batch is written; then
  // that one is handed over at once, nothing is put off, and the case is
  // set up again.
  for (int attempt = 0; attempt < 20; ++attempt) {
    Feeder f(lo);
    Snapshots s;
    const BatchPtr first = f.seal(200, false), second = f.seal(200, false);
    f.write(first);   // due: handed to the compactor, which writes and fsyncs it
    f.write(second);  // due again, microseconds later: put off while that write lasts
    s.note(f);
    ASSERT_FALSE(s.at.empty());
    if (s.at.back() == 400u) continue;  // the compactor was already idle: not this case
    ASSERT_EQ(s.at, std::vector<uint64_t>{200});
    f.w().tick();
    s.note(f);
    EXPECT_EQ(s.at.back(), 400u) << "the idle tick did not take the snapshot put off";
    f.w().tick();  // nothing more to do
    s.note(f);
    EXPECT_EQ(s.at, (std::vector<uint64_t>{200, 400}));
    return;
  }
  FAIL() << "the compactor was idle at every second write: the case never arose";
}

// The interval trigger (--snapshot-interval) on a feed that went quiet:
// the idle ticks take the snapshot once the interval has passed, with no
// record after it.
TEST(Compaction, TheIntervalTriggerFiresOnAQuietFeed) {
  LogOptions lo;
  lo.snapshot_records = UINT64_MAX;
  lo.snapshot_journal_pct = 0;
  lo.snapshot_seconds = 1;
  Feeder f(lo);
  Snapshots s;
  f.append(50, false);
  s.note(f);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (s.at.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the log thread's idle wait
    f.w().tick();
    s.note(f);
  }
  EXPECT_EQ(s.at, std::vector<uint64_t>{50}) << "no snapshot 10 s into a 1 s interval";
}

// The nice value of each of this process's threads, from /proc.
std::vector<int> thread_nice_values() {
  std::vector<int> out;
  for (const auto& t : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream f(t.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const size_t close = stat.rfind(')');  // the thread's name may hold spaces and parentheses
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    std::string field;
    for (int i = 3; i <= 19 && rest >> field; ++i)  // field 19 is the nice value (proc(5))
      if (i == 19) out.push_back(std::stoi(field));
  }
  return out;
}

// The compactor yields the cores to the reader, the engine and the log
// thread: its thread alone runs LogOptions::compactor_nice above the
// process's nice value.
TEST(Compaction, TheCompactorRunsNicerThanTheRest) {
  LogOptions lo;
  ASSERT_GT(lo.compactor_nice, 0);
  const int base = ::getpriority(PRIO_PROCESS, 0);  // this thread's
  if (base >= 19) GTEST_SKIP() << "started at the lowest priority already";
  const int want = std::min(19, base + lo.compactor_nice);
  const auto before = thread_nice_values();
  ASSERT_EQ(std::count(before.begin(), before.end(), want), 0);
  Feeder f(lo);
  std::vector<int> now;
  for (int i = 0; i < 200 && std::count(now.begin(), now.end(), want) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the thread sets it as it starts
    now = thread_nice_values();
  }
  EXPECT_EQ(std::count(now.begin(), now.end(), want), 1) << "no thread at the compactor's nice value";
  EXPECT_EQ(std::count(now.begin(), now.end(), base), static_cast<long>(now.size()) - 1)
      << "only the compactor is niced";
}

// The state a power loss can leave between the new snapshot's rename and
// the directory fsync that carries the older one's deletion: the older
// snapshot and its segments gone, the new one still under its .tmp name.
TEST(Compaction, ASnapshotLeftUnderItsTmpNameIsRecovered) {
  test::TempDir dir;
  const uint64_t digest = run(dir.path(), test::sim_records(20000, 5, 50, 50), 25, [](const LogWriter&) {});
  DataDirFiles f = list_data_dir(dir.path());
  ASSERT_EQ(f.snapshots.size(), 2u);
  const uint64_t older = f.snapshots.front(), newest = f.snapshots.back();
  const std::string tmp = snapshot_path(dir.path(), newest) + ".tmp";
  ASSERT_EQ(rename(snapshot_path(dir.path(), newest).c_str(), tmp.c_str()), 0);
  ASSERT_EQ(unlink(snapshot_path(dir.path(), older).c_str()), 0);
  for (uint64_t s : f.segments)
    if (s <= newest) {
      ASSERT_EQ(unlink(segment_path(dir.path(), s).c_str()), 0);
    }

  Engine ro;
  DataDirRecovery r0 = recover_data_dir(dir.path(), ro, true);
  EXPECT_EQ(r0.snapshot_seq, newest);
  EXPECT_EQ(state_digest(*ro.current()), digest);
  EXPECT_EQ(access(tmp.c_str(), F_OK), 0) << "read-only recovery renames nothing";

  Engine e;
  DataDirRecovery r = recover_data_dir(dir.path(), e);
  EXPECT_EQ(r.snapshot_seq, newest);
  EXPECT_EQ(r.seq, 20000u);
  EXPECT_EQ(state_digest(*e.current()), digest);
  EXPECT_NE(access(tmp.c_str(), F_OK), 0);
  EXPECT_EQ(list_data_dir(dir.path()).snapshots, std::vector<uint64_t>{newest}) << "taken under its own name";
}

// A .tmp that is not a whole snapshot (a crash while it was written) is
// never loaded: recovery falls back to the older snapshot and removes it.
TEST(Compaction, ATornTmpIsRemovedAndTheOlderSnapshotUsed) {
  test::TempDir dir;
  const uint64_t digest = run(dir.path(), test::sim_records(20000, 5, 50, 50), 25, [](const LogWriter&) {});
  DataDirFiles f = list_data_dir(dir.path());
  ASSERT_EQ(f.snapshots.size(), 2u);
  const uint64_t older = f.snapshots.front(), newest = f.snapshots.back();
  const std::string tmp = snapshot_path(dir.path(), newest) + ".tmp";
  std::string data = test::read_file(snapshot_path(dir.path(), newest));
  ASSERT_EQ(unlink(snapshot_path(dir.path(), newest).c_str()), 0);
  test::write_file(tmp, data.substr(0, data.size() - 10));

  Engine e;
  DataDirRecovery r = recover_data_dir(dir.path(), e);
  EXPECT_EQ(r.snapshot_seq, older);
  EXPECT_EQ(r.replayed, 20000u - older);
  EXPECT_EQ(state_digest(*e.current()), digest);
  EXPECT_NE(access(tmp.c_str(), F_OK), 0) << "the torn file is removed";
  EXPECT_EQ(list_data_dir(dir.path()).snapshots, std::vector<uint64_t>{older});
}

}  // namespace
}  // namespace oddsrelay
