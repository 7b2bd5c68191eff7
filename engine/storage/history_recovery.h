// A restart on a data dir with the odds history (docs/architecture.md "Odds
// history", "On disk"), in two halves so that reading the history's files
// back does not hold the state off the network.
//
// Before ready (HistoryRestart::recover): the history's files end at some
// position H, at or before the journal's (the history thread runs behind
// the engine); history-synced names a position H' <= H without reading
// them (history_segments.h). The engine recovers from the newest snapshot
// at or before H', and the batches the journal replays after H' are kept,
// as the history reads them (records, evictions), with the state they end
// at. The journal keeps what the history has not made durable
// (LogOptions::keep_after), so the records after H' are there.
//
// After ready, on the history thread before its first live batch
// (HistoryRestart::finish): the files are read into the store, then the
// kept batches after H go to the store and the files, so every record the
// journal kept has its points and held_from_seq stays 0. Only when that
// cannot be (a data dir without history files, files seeded, damaged since
// their last sync, or reaching past the journal) is the history seeded from
// the state the recovery ended at, as a late edge's is, and held_from_seq
// says so. Until finish() returns, the history's routes answer 503.
//
// Without history-synced (its first start, a data dir from before it) the
// files are read before ready, as the position is then only known from
// them.
//
// A seeded history writes the state it started from beside its files
// (history-seed-<base>.jsonl, a snapshot file): the next restart seeds the
// store with it and reads the files after it, as if from the log's start,
// instead of seeding again and losing what was recorded since.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/engine.h"
#include "engine/history/history_store.h"
#include "engine/storage/data_dir.h"
#include "engine/storage/history_segments.h"

namespace oddsrelay {

struct HistoryRecovery {
  history::SegmentLoad load;
  bool rebuilt = false;    // false: seeded from the recovered state
  std::string why_seeded;  // when not rebuilt
  std::string seed_error;  // why a seeded history's seed could not be read
  uint64_t replayed = 0;   // journal records given to the history after the files' end
  uint64_t forgotten = 0;  // events the files still held that the state no longer does
  bool deferred = false;   // the files were read after ready
  double millis = 0;       // reading the files and the kept batches
};

class HistoryRestart {
 public:
  HistoryRestart(history::HistoryStore& store, history::HistorySegments& segments)
      : store_(store), segments_(segments) {}

  // Recovers `engine` from `dir` (recover_data_dir); the history is left for
  // finish() unless it had to be read now. Throws as recover_data_dir does.
  DataDirRecovery recover(const std::string& dir, Engine& engine);
  // Whether finish() has work left (false once it ran, or when recover()
  // did it all).
  bool pending() const { return pending_; }
  // The history thread, before any batch after the recovery: the store
  // rebuilt or seeded, `segments` open for appends. A `stop` seen while
  // reading the files leaves them as they were and the store empty, and
  // returns false (the node is stopping).
  bool finish(const std::atomic<bool>* stop = nullptr);
  const HistoryRecovery& result() const { return hr_; }

 private:
  void load_files(const std::atomic<bool>* stop);
  bool read_seed(uint64_t base);
  void seed(const std::string& why);
  void rebuild();

  history::HistoryStore& store_;
  history::HistorySegments& segments_;
  HistoryRecovery hr_;
  std::string dir_, epoch_;
  uint64_t seeded_at_ = 0;                  // the seed read back (0: none)
  std::vector<uint64_t> seed_events_;       // its events, reconciled with the state as the files' are
  uint64_t after_ = 0;                      // H': the kept batches' records are after it
  std::vector<history::LoggedBatch> kept_;  // the journal's batches after H'
  SnapshotPtr state_;                       // where the recovery ended
  bool loaded_ = false, pending_ = false;
};

// Both halves at once (tests, and `oddsfeed`-like callers that serve nothing).
DataDirRecovery recover_with_history(const std::string& dir, Engine& engine, history::HistoryStore& store,
                                     history::HistorySegments& segments, HistoryRecovery& hr);

}  // namespace oddsrelay
