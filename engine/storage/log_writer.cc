#include "engine/storage/log_writer.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "engine/storage/fs_util.h"
#include "engine/storage/snapshot_file.h"
#include "protocol/feed_writer.h"
#include "protocol/named_thread.h"

namespace oddsrelay {

using Clock = std::chrono::steady_clock;

bool LogWriter::open(const DataDirRecovery& r, std::string& err) {
  seq_ = r.seq;
  stats_.written_seq.store(seq_);
  stats_.synced_seq.store(seq_);
  last_sync_ = last_snapshot_ = Clock::now();
  struct stat st {};
  if (r.snapshot_seq != 0 && ::stat(snapshot_path(dir_, r.snapshot_seq).c_str(), &st) == 0)
    snapshot_bytes_.store(static_cast<uint64_t>(st.st_size));
  // Appends continue the last segment; with none (a new dir, or a snapshot
  // that covers everything) a new one starts after the current position.
  if (!open_segment(r.tail_segment != 0 ? r.tail_segment : r.seq + 1, err)) return false;
  thread_ = named_thread("compactor", [this] {
    // On a thread id, getpriority and setpriority read and set that
    // thread's nice value alone (Linux); above the process's own, so a
    // server started under nice keeps the same order.
    const auto tid = static_cast<id_t>(::gettid());
    if (opts_.compactor_nice > 0)
      ::setpriority(PRIO_PROCESS, tid, ::getpriority(PRIO_PROCESS, tid) + opts_.compactor_nice);
    compactor();
  });
  return true;
}

bool LogWriter::open_segment(uint64_t first, std::string& err) {
  std::string header;
  feed::write_header("s7", header);
  feed::append_checksum(header, 0);
  header += '\n';
  return open_appending(segment_path(dir_, first), header, false, fd_, err);
}

void LogWriter::append(const Batch& b) {
  // A record read from a feed keeps its line (the object alone, ending in
  // its closing brace: FeedParser::parse): that goes out as it is, from the
  // record, and only its checksum suffix is new (a catch-up batch is
  // megabytes of lines, and copying them into one buffer first cost about
  // as much as the write). Suffixes and the lines of records without one
  // are written into buf_; the iovecs name both, in record order.
  buf_.clear();
  pieces_.clear();
  for (const feed::Record& r : b.records) {
    const std::string& line = r.text;
    if (!line.empty()) {
      pieces_.push_back({line.data(), 0, line.size() - 1});
      const size_t at = buf_.size();
      buf_.resize(at + feed::kChecksumSuffixLen + 1);
      feed::checksum_suffix(line, buf_.data() + at);
      buf_.back() = '\n';
      pieces_.push_back({nullptr, at, feed::kChecksumSuffixLen + 1});
      continue;
    }
    const size_t start = buf_.size();
    feed::write_record(r, buf_);
    feed::append_checksum(buf_, start);
    buf_ += '\n';
    if (!pieces_.empty() && !pieces_.back().line && pieces_.back().at + pieces_.back().len == start)
      pieces_.back().len += buf_.size() - start;  // one run of buf_
    else
      pieces_.push_back({nullptr, start, buf_.size() - start});
  }
  iov_.clear();
  uint64_t bytes = 0;
  for (const Piece& p : pieces_) {
    const char* base = p.line ? p.line : buf_.data() + p.at;
    iov_.push_back({const_cast<char*>(base), p.len});
    bytes += p.len;
  }
  std::string err;
  if (!writev_fully(fd_, iov_, err)) {
    // The state goes on; the log now has a hole a restart will report.
    if (stats_.write_errors.fetch_add(1) == 0) std::fprintf(stderr, "oddsrelay: journal %s\n", err.c_str());
  }
  seq_ = b.snapshot->seq;
  stats_.written_seq.store(seq_, std::memory_order_relaxed);
  dirty_ = true;
  stats_.records.fetch_add(b.records.size(), std::memory_order_relaxed);
  stats_.bytes.fetch_add(bytes, std::memory_order_relaxed);
  since_snapshot_ += b.records.size();
  since_snapshot_bytes_ += bytes;
  const auto now = Clock::now();
  if (now - last_sync_ >= std::chrono::milliseconds(opts_.sync_ms)) sync();
  if (!b.catch_up) {
    if (due(now, 1)) compact(b.snapshot, now, true);
  } else if (due(now, opts_.catch_up_factor)) {
    // A catch-up: the engine is behind its source, and a snapshot every
    // normal cadence of a state growing this fast is most of what the
    // journal costs it. The triggers are catch_up_factor times higher and
    // the log thread never waits for the compactor (it tries again at the
    // next batch).
    compact(b.snapshot, now, false);
  }
  // What is written and in no snapshot yet: the snapshot that covers it,
  // should the feed go quiet before another batch (tick()).
  unsnapshotted_ = since_snapshot_ > 0 ? b.snapshot : nullptr;
}

namespace {
uint64_t scaled(uint64_t v, uint64_t factor) {
  if (factor <= 1) return v;
  return v > UINT64_MAX / factor ? UINT64_MAX : v * factor;
}
}  // namespace

bool LogWriter::due(Clock::time_point now, uint32_t factor) const {
  return since_snapshot_ >= scaled(opts_.snapshot_records, factor) ||
         since_snapshot_bytes_ >= scaled(journal_limit(), factor) ||
         (since_snapshot_ > 0 && now - last_snapshot_ >= std::chrono::seconds(opts_.snapshot_seconds));
}

// Hands `snapshot` (that of the last batch written) to the compactor, after
// ending the segment there. False when it did not (the compactor is busy,
// and `may_wait` is false or the journal is still within its share).
bool LogWriter::compact(const SnapshotPtr& snapshot, Clock::time_point now, bool may_wait) {
  std::unique_lock lock(mu_);
  if (busy_ || pending_) {
    // The last one is still being written: try again at the next batch,
    // unless the journal has already reached its share of the snapshot.
    // Then this thread waits for the compactor, so that the dir stays
    // within its bound at any feed rate: a live feed would need to bring a
    // share of the state in less time than a snapshot takes to write.
    if (!may_wait || since_snapshot_bytes_ < journal_limit()) return false;
    const auto t0 = Clock::now();
    idle_.wait(lock, [&] { return !busy_ && !pending_; });
    stats_.compaction_waits.fetch_add(1, std::memory_order_relaxed);
    stats_.compaction_wait_ms.fetch_add(
        static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count()),
        std::memory_order_relaxed);
  }
  // The segment ends here: the snapshot covers it and everything before.
  std::string err;
  if (!open_segment(seq_ + 1, err)) {
    std::fprintf(stderr, "oddsrelay: %s; compaction postponed\n", err.c_str());
    return false;
  }
  pending_ = snapshot;
  since_snapshot_ = since_snapshot_bytes_ = 0;
  last_snapshot_ = now;
  cv_.notify_one();
  return true;
}

// The journal bytes after which a snapshot is due: the configured share of
// the newest snapshot, at least snapshot_min_bytes.
uint64_t LogWriter::journal_limit() const {
  if (opts_.snapshot_journal_pct == 0) return UINT64_MAX;
  return std::max(opts_.snapshot_min_bytes,
                  snapshot_bytes_.load(std::memory_order_relaxed) / 100 * opts_.snapshot_journal_pct);
}

void LogWriter::tick() {
  const auto now = Clock::now();
  if (dirty_ && now - last_sync_ >= std::chrono::milliseconds(opts_.sync_ms)) sync();
  // Idle with a snapshot due: the normal bound passed during a catch-up,
  // or a live batch's snapshot was put off while the compactor wrote the
  // one before, or the time trigger. Without this a feed that goes quiet
  // would keep it pending until its next record.
  if (unsnapshotted_ && due(now, 1) && compact(unsnapshotted_, now, false)) unsnapshotted_.reset();
  release_hold();
}

void LogWriter::release_hold() {
  const uint64_t wanted = held_base_.load(std::memory_order_relaxed);
  if (wanted == 0 || opts_.keep_after() < wanted) return;
  held_base_.store(0, std::memory_order_relaxed);
  std::lock_guard lock(mu_);
  reprune_ = true;
  cv_.notify_one();
}

void LogWriter::sync() {
  if (fd_ >= 0 && dirty_) {
    ::fdatasync(fd_);
    stats_.syncs.fetch_add(1, std::memory_order_relaxed);
  }
  stats_.synced_seq.store(seq_, std::memory_order_relaxed);
  dirty_ = false;
  last_sync_ = Clock::now();
}

void LogWriter::compactor() {
  for (;;) {
    SnapshotPtr s;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return pending_ || stopping_ || reprune_; });
      if (!pending_ && reprune_ && !stopping_) {
        reprune_ = false;
        lock.unlock();
        prune();
        sync_dir_of(epoch_path(dir_));
        continue;
      }
      if (!pending_) return;
      s = std::move(pending_);
      busy_ = true;
    }
    const auto t0 = Clock::now();
    SnapshotInfo info;
    std::string err;
    // The older snapshots and the segments they alone need go as soon as
    // the new one has its name, in the directory fsync that makes the name
    // durable: a power loss in between leaves the new file complete under
    // its .tmp name, which recovery takes as a snapshot (data_dir.h).
    if (write_snapshot_file(*s, snapshot_path(dir_, s->seq), info, err, &layout_, [this] { prune(); })) {
      snapshot_bytes_.store(info.bytes, std::memory_order_relaxed);
      stats_.snapshots.fetch_add(1, std::memory_order_relaxed);
      stats_.last_snapshot_seq.store(info.seq, std::memory_order_relaxed);
      stats_.last_snapshot_bytes.store(info.bytes, std::memory_order_relaxed);
      stats_.last_snapshot_copied.store(info.copied, std::memory_order_relaxed);
      stats_.last_snapshot_ms.store(
          static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count()),
          std::memory_order_relaxed);
    } else {
      stats_.snapshot_failures.fetch_add(1, std::memory_order_relaxed);
      std::fprintf(stderr, "oddsrelay: snapshot failed: %s\n", err.c_str());
    }
    s.reset();  // the state it held can go before the lock is taken
    {
      std::lock_guard lock(mu_);
      busy_ = false;
    }
    idle_.notify_all();
  }
}

// Keeps the newest `keep_snapshots` snapshots and the segments needed to
// replay from the oldest of them; deletes the rest. The caller fsyncs the
// directory.
void LogWriter::prune() {
  DataDirFiles f = list_data_dir(dir_);
  if (f.snapshots.size() < opts_.keep_snapshots) return;
  size_t keep_from = f.snapshots.size() - opts_.keep_snapshots;
  const uint64_t wanted = f.snapshots[keep_from];
  uint64_t base = wanted;
  if (opts_.keep_after) {
    const uint64_t held = opts_.keep_after();
    while (keep_from > 0 && f.snapshots[keep_from] > held) --keep_from;
    base = f.snapshots[keep_from] <= held ? f.snapshots[keep_from] : 0;  // 0: every segment stays
  }
  held_base_.store(base < wanted ? wanted : 0, std::memory_order_relaxed);
  uint64_t deleted = 0;
  for (size_t i = 0; i < keep_from; ++i)
    if (::unlink(snapshot_path(dir_, f.snapshots[i]).c_str()) == 0) ++deleted;
  // Segment i holds positions segments[i] .. segments[i+1]-1; the last one
  // is being appended to and is never deleted.
  for (size_t i = 0; i + 1 < f.segments.size(); ++i)
    if (f.segments[i + 1] - 1 <= base && ::unlink(segment_path(dir_, f.segments[i]).c_str()) == 0) ++deleted;
  stats_.files_deleted.fetch_add(deleted, std::memory_order_relaxed);
}

void LogWriter::close() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
  // The history has written all it will (the node stops it first).
  const uint64_t wanted = held_base_.load(std::memory_order_relaxed);
  if (wanted != 0 && opts_.keep_after() >= wanted) {
    prune();
    sync_dir_of(epoch_path(dir_));
  }
  if (fd_ >= 0) {
    ::fdatasync(fd_);
    ::close(fd_);
    fd_ = -1;
  }
}

}  // namespace oddsrelay
