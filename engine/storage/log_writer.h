// The durable stage of the pipeline (pipeline.h LogStage): every sealed
// batch is appended to the current journal segment (writev) before
// the batch is published, so a process crash loses nothing any client was
// shown; fdatasync every `sync_ms` bounds what a power loss can take.
// Compaction: every `snapshot_records` records, or once the journal since
// the last snapshot reaches `snapshot_journal_pct` percent of that
// snapshot's size, or `snapshot_seconds` with at least one record, the
// segment is rolled and the batch's immutable snapshot goes to a compactor
// thread, which writes it (snapshot_file.h, copying the lines of events
// unchanged since its previous snapshot) while the engine goes on, then
// deletes what the older of the two newest snapshots covers. While the
// pipeline is behind its source (Batch::catch_up: a replay at max speed, a
// backlog), the record and share triggers count catch_up_factor times over
// and the log thread does not wait for the compactor; the first live batch
// or idle tick applies the normal bound again. A snapshot due when the feed
// goes quiet (the time trigger, or one put off while the compactor wrote
// the one before) is taken at the log thread's idle tick, not at the next
// record. See docs/architecture.md "The log".
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/core/pipeline.h"
#include "engine/storage/data_dir.h"
#include "engine/storage/snapshot_file.h"

namespace oddsrelay {

struct LogOptions {
  int sync_ms = 200;
  uint64_t snapshot_records = 50'000;
  // The journal a cycle adds is at most this share of the snapshot (0:
  // off), so that the data dir (two snapshots and the journal since the
  // older) swings by less than a tenth around its mean: see
  // docs/architecture.md "The log". A snapshot is due when it is reached,
  // and if the one before is still being written, the log thread waits for
  // it (not during a catch-up: catch_up_factor). Never below
  // snapshot_min_bytes, so a tiny state is not written again at every
  // batch.
  uint32_t snapshot_journal_pct = 15;
  uint64_t snapshot_min_bytes = 1 << 20;
  int snapshot_seconds = 300;
  size_t keep_snapshots = 2;  // the newest, and one to fall back on
  // While the pipeline is behind its source (Batch::catch_up), the record
  // and journal-share triggers are this many times higher (1.6M records,
  // 480% of the snapshot at the defaults) and the log thread does not wait
  // for the compactor; the time trigger stays. 32 brings a replay at max
  // speed to its pace with no compaction (perf/log/run.sh; 8 and 16 fall
  // short). Meanwhile the dir can grow to about 2 + 3 x factor x share
  // snapshots, and a restart replays up to two such cycles of journal. The
  // first live batch after (or the first idle tick) applies the normal
  // bound again.
  uint32_t catch_up_factor = 32;
  // The compactor thread's nice value, above the process's. Its work can
  // wait: while the reader, the engine and the log thread keep the cores
  // busy (a replay at max speed, a catch-up) it takes what they leave, and
  // a snapshot falling due meanwhile is put off (a catch-up never waits for
  // it) instead of every record slowing down: a 1M-record replay with a
  // data dir ran at 0.67-0.79x the one without, against 0.60-0.70x at 0
  // (interleaved runs; docs/architecture.md "The log").
  int compactor_nice = 10;
  // When set, the journal keeps the records after the position it returns
  // (the odds history's files have written up to there: a restart replays
  // the rest into the history, engine/storage/history_recovery.h):
  // compaction then keeps a snapshot at or before it and the segments
  // after, and deletes what it kept so once the history has passed it (at
  // an idle tick, or at close).
  std::function<uint64_t()> keep_after;
};

struct LogStats {
  std::atomic<uint64_t> records{0}, bytes{0}, syncs{0};
  std::atomic<uint64_t> snapshots{0}, snapshot_failures{0}, last_snapshot_seq{0}, last_snapshot_bytes{0};
  std::atomic<uint64_t> last_snapshot_ms{0};      // how long writing it took
  std::atomic<uint64_t> last_snapshot_copied{0};  // its state lines copied from the one before
  std::atomic<uint64_t> files_deleted{0};
  // Times the log thread waited for a snapshot being written because the
  // journal had reached its share (LogOptions::snapshot_journal_pct); never
  // during a catch-up.
  std::atomic<uint64_t> compaction_waits{0}, compaction_wait_ms{0};
  std::atomic<uint64_t> write_errors{0};
  // Log positions: the last record written to the segment, the last one
  // fdatasync'd (the metrics' journal lag against the sealed position).
  std::atomic<uint64_t> written_seq{0}, synced_seq{0};
};

class LogWriter : public LogStage {
 public:
  LogWriter(std::string dir, LogOptions opts) : dir_(std::move(dir)), opts_(opts) {}
  ~LogWriter() override { close(); }
  LogWriter(const LogWriter&) = delete;
  LogWriter& operator=(const LogWriter&) = delete;

  // Opens the segment appends go to, as recovery left the dir.
  bool open(const DataDirRecovery& r, std::string& err);
  void append(const Batch& b) override;  // the pipeline's log thread
  void tick() override;                  // likewise, when idle
  // After the pipeline has stopped: syncs, waits for a snapshot being
  // written, and closes.
  void close();

  const LogStats& stats() const { return stats_; }
  // True while a snapshot is handed over or being written.
  bool compacting() const {
    std::lock_guard lock(mu_);
    return busy_ || pending_;
  }

 private:
  bool open_segment(uint64_t first, std::string& err);
  void sync();
  void compactor();
  void prune();
  // The log thread, idle: asks the compactor for the prune the history's
  // hold put off, once the history has passed it.
  void release_hold();
  uint64_t journal_limit() const;
  // Whether a snapshot is due with the record and journal triggers
  // `factor` times higher (1: the normal bound; the time trigger as is).
  bool due(std::chrono::steady_clock::time_point now, uint32_t factor) const;
  bool compact(const SnapshotPtr& snapshot, std::chrono::steady_clock::time_point now, bool may_wait);

  std::string dir_;
  LogOptions opts_;
  LogStats stats_;
  int fd_ = -1;
  uint64_t seq_ = 0;  // position of the last record written
  // append()'s scratch: checksum suffixes and encoded records, and what
  // goes out, in order: a record's own line (`line`) or a range of buf_.
  struct Piece {
    const char* line;  // null: the range [at, at + len) of buf_
    size_t at, len;
  };
  std::string buf_;
  std::vector<Piece> pieces_;
  std::vector<iovec> iov_;
  bool dirty_ = false;
  std::chrono::steady_clock::time_point last_sync_, last_snapshot_;
  uint64_t since_snapshot_ = 0, since_snapshot_bytes_ = 0;
  std::atomic<uint64_t> snapshot_bytes_{0};  // of the newest snapshot: the journal-share trigger's base
  // The last batch's snapshot while records written are in no snapshot:
  // what tick() compacts once one is due and no batch follows.
  SnapshotPtr unsnapshotted_;

  mutable std::mutex mu_;
  std::condition_variable cv_, idle_;  // the compactor's work; its being done with it
  SnapshotPtr pending_;                // for the compactor; null when it has nothing to do
  SnapshotLayout layout_;              // compactor only: the last file it wrote
  bool busy_ = false, stopping_ = false;
  bool reprune_ = false;                // release_hold(): prune again
  std::atomic<uint64_t> held_base_{0};  // the base prune() wanted while keep_after held it back; 0: none
  std::thread thread_;
};

}  // namespace oddsrelay
