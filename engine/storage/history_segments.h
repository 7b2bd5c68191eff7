// The odds history on disk (docs/architecture.md "Odds history"): with
// --data-dir, the history thread appends what it applied to
// history-<first>.bin beside the journal (engine/storage/data_dir.h), in the
// byte form of engine/history/segment_codec.h, so that a restart rebuilds
// the history from them instead of from the recovered state alone.
//
// A file: 8 bytes "ORHSEG1\n", 8 bytes little-endian base (0: the history
// from the log's start; else the seq it was seeded at, and the file cannot
// rebuild a history), then frames, one per write:
//   varint length, the payload (one or more batches), 8 bytes XXH3-64 of the payload
// A frame is appended whole by one write; a torn or corrupt tail (a kill or
// power loss mid-write) is cut at start, as the journal's is, and counted.
// Files rotate at `segment_bytes`, or sooner once the codec's state (every
// layout and outcome name the file has used, which a reader holds too)
// passes `state_bytes`; a closed file goes once every event it holds has
// left at the retention horizon (its history went with it).
//
// Beside them, history-synced (24 bytes: "ORHSYN1\n", little-endian seq,
// XXH3-64 of the 16 bytes before) names the position the files were last
// fdatasync'd through, rewritten after each sync: a restart reads it before
// the files, so that the state can be served while they are read back
// (engine/storage/history_recovery.h).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "engine/history/history_recorder.h"
#include "engine/history/segment_codec.h"

namespace oddsrelay::history {

struct SegmentLoad {
  uint64_t files = 0, batches = 0, bytes = 0;
  uint64_t seq = 0;            // the last position the files hold (0: none)
  uint64_t base = 0;           // 0: from the log's start; else the seq a seeded history started after
  bool from_start = true;      // every file was read: from the log's start, or after its seed
  bool torn_tail = false;      // a bad tail was cut
  uint64_t cut_bytes = 0;      // its bytes
  uint64_t files_dropped = 0;  // files after a bad frame, deleted
};

class HistorySegments : public AppliedLog {
 public:
  static constexpr uint64_t kDefaultSegmentBytes = uint64_t{64} << 20;
  // The simulator's feed reaches it at about 25 MB of file
  // (perf/history/history_bench.cc); a feed whose lines move more starts
  // its next file sooner, so that the writer (and a restart reading the
  // file) never holds several times the history's own bytes in layouts.
  static constexpr uint64_t kDefaultStateBytes = uint64_t{32} << 20;

  explicit HistorySegments(std::string dir, uint64_t segment_bytes = kDefaultSegmentBytes, int sync_ms = 200,
                           uint64_t state_bytes = kDefaultStateBytes)
      : dir_(std::move(dir)), segment_bytes_(segment_bytes), state_bytes_(state_bytes), sync_ms_(sync_ms) {}
  ~HistorySegments() override { close(); }
  HistorySegments(const HistorySegments&) = delete;
  HistorySegments& operator=(const HistorySegments&) = delete;

  // Reads every file in order, calling fn per batch, and cuts a bad tail.
  // Throws std::runtime_error when a file cannot be read or cut; what fn
  // throws (a stop while reading) leaves the files as they were. A file
  // whose history was seeded at `base` is read only when seeded(base) says
  // the caller seeded the store with that state first (the seed beside the
  // files, history_seed_path() in data_dir.h; clear() deletes it with them).
  SegmentLoad load(const std::function<void(const LoggedBatch&)>& fn,
                   const std::function<bool(uint64_t base)>& seeded = {});
  // history-synced's position: the files hold at least the batches through
  // it unless they were damaged since. Nullopt: no such file, or a bad one.
  static std::optional<uint64_t> synced_through(const std::string& dir);
  // Deletes every file (a history that cannot be rebuilt starts again).
  void clear();
  // Opens the file appends go to, whose first batch is at `next`; `base`
  // as in the header. False with `err` when it cannot.
  bool start(uint64_t next, uint64_t base, std::string& err);
  // The history thread: a batch it applied (records from first_seq on), then
  // flush() after a run of them: one frame, one write.
  void add(uint64_t first_seq, uint64_t seq, std::span<const feed::Record> records,
           const std::vector<uint64_t>& evicted) override;
  void flush() override;
  void close();
  // Every event some file holds records of and no batch evicted.
  std::vector<uint64_t> held_events() const;
  // The events left without a batch the files kept saying so (a restart's
  // reconciliation, history_recovery.h): a file holding only them goes.
  void forget(const std::vector<uint64_t>& numbers) {
    retire(numbers);
    if (!files_.empty())
      for (uint64_t n : numbers) files_.back().events.erase(n);
    counted();
  }

  // The last position written: what a process crash (kill -9) keeps; the
  // journal keeps what is after it (log_writer.h). fdatasync follows every
  // `sync_ms`, as the journal's: a power loss may take the files' tail
  // with the journal's, and the restart then says what it holds.
  uint64_t written_seq() const { return durable_seq_.load(std::memory_order_acquire); }
  uint64_t files() const { return nfiles_.load(std::memory_order_relaxed); }
  uint64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }

 private:
  struct File {
    uint64_t first = 0, bytes = 0;
    std::unordered_set<uint64_t> events;  // whose records it holds
  };
  // Drops `evicted` from the closed files, deleting those left empty.
  void retire(const std::vector<uint64_t>& evicted);
  void note_events(std::span<const feed::Record> records);
  void write_synced();
  bool load_file(const std::string& path, File& f, SegmentLoad& r, const std::function<void(const LoggedBatch&)>& fn,
                 const std::function<bool(uint64_t)>& seeded);
  void counted();

  std::string dir_;
  uint64_t segment_bytes_, state_bytes_;
  int sync_ms_;
  SegmentCodec codec_;
  std::vector<File> files_;  // ascending; the last one is appended to
  std::vector<uint8_t> buf_;
  uint64_t base_ = 0, written_seq_ = 0, pending_seq_ = 0;
  int fd_ = -1, synced_fd_ = -1;
  std::chrono::steady_clock::time_point last_sync_{};
  std::atomic<uint64_t> durable_seq_{0}, nfiles_{0}, bytes_{0};
};

}  // namespace oddsrelay::history
