// The data dir: where the log lives (docs/architecture.md "The log").
//   epoch                         the log's name, made with the dir, never changed
//   snapshot-<seq>.jsonl          the state at log position seq (snapshot_file.h)
//   journal-<first>.jsonl         records at positions first, first+1, ... (journal.h)
//   history-<first>.bin           odds-history points from position first on
//                                 (engine/storage/history_segments.h)
//   history-synced                the position those were last synced through
//   history-seed-<base>.jsonl     the state a seeded odds history started from
//                                 (a snapshot file; history_recovery.h)
// Positions are zero-padded to 20 digits so that names sort in log order.
// recover_data_dir() brings an engine back to the newest position the dir
// holds: the newest intact snapshot (falling back to an older one when the
// newest is torn or corrupt; a complete snapshot-<seq>.jsonl.tmp, which a
// power loss can leave as compaction deletes the older snapshot at the
// rename, counts and is renamed), then every journal record after it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/core/engine.h"

namespace oddsrelay {

struct DataDirFiles {
  std::vector<uint64_t> snapshots;      // seqs, ascending
  std::vector<uint64_t> segments;       // first positions, ascending
  std::vector<uint64_t> history;        // history segments' first positions, ascending
  std::vector<uint64_t> history_seeds;  // the seeds' bases
  std::string epoch;                    // empty: no epoch file yet
};

std::string epoch_path(const std::string& dir);
std::string snapshot_path(const std::string& dir, uint64_t seq);
std::string segment_path(const std::string& dir, uint64_t first);
std::string history_segment_path(const std::string& dir, uint64_t first);
std::string history_seed_path(const std::string& dir, uint64_t base);
DataDirFiles list_data_dir(const std::string& dir);

// A new epoch name: 12 hex digits from the clock and /dev/urandom.
std::string new_epoch();

struct DataDirRecovery {
  std::string epoch;
  bool created = false;       // the dir (or its epoch) was made now
  uint64_t snapshot_seq = 0;  // 0: started from an empty state
  uint64_t snapshot_events = 0;
  int64_t snapshot_retain_ended_ms = 0;        // the horizon the snapshot was kept with (0: not recorded)
  std::vector<std::string> skipped_snapshots;  // "<path>: why" for each newer one that failed
  // No snapshot at or before RecoverFrom::snapshot_at_most could start the
  // state (damaged, or the journal compacted past it): a newer one did.
  bool past_at_most = false;
  uint64_t replayed = 0;  // journal records applied after the snapshot
  uint64_t bad_records = 0;
  uint64_t truncated_bytes = 0;
  bool torn_tail = false;
  uint64_t seq = 0;           // the position the engine is at now
  uint64_t tail_segment = 0;  // first position of the segment appends go to (0: none yet)
  double millis = 0;
};

// Creates `dir` (and its epoch) when missing, then recovers into `engine`,
// which must be fresh. Throws std::runtime_error when the dir is unusable:
// unreadable, or a gap in the log (no snapshot covers the records before
// the oldest segment). `read_only` (oddsfeed) changes nothing on disk: no
// dir or epoch is made, a torn tail is skipped rather than cut.
// `snapshot_at_most` starts from the newest snapshot at or before it (the
// odds history's files reach it: engine/storage/history_recovery.h), and
// `on_batch` sees each batch the journal's replay commits.
struct RecoverFrom {
  uint64_t snapshot_at_most = UINT64_MAX;
  std::function<void(const Batch&)> on_batch;
};
DataDirRecovery recover_data_dir(const std::string& dir, Engine& engine, bool read_only = false,
                                 const RecoverFrom& from = {});

}  // namespace oddsrelay
