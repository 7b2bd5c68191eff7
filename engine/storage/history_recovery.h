// A restart on a data dir with the odds history (docs/architecture.md "Odds
// history", "On disk"): the history's files (history_segments.h) are read
// back into the store first; they reach some position H, at or before the
// journal's (the history thread runs behind the engine). The engine then
// recovers from the newest snapshot at or before H, and each batch the
// journal replays after H goes to the history and its files too, so every
// record the journal kept has its points, and held_from_seq stays 0. The
// journal keeps what the history has not made durable
// (LogOptions::keep_after), so the records after H are there. Only when
// they are not (a data dir kept without history files, or whose files were
// seeded, or lost) is the history seeded from the recovered state, as a
// late edge's is, and held_from_seq says so.
#pragma once

#include <cstdint>
#include <string>

#include "engine/core/engine.h"
#include "engine/history/history_store.h"
#include "engine/storage/data_dir.h"
#include "engine/storage/history_segments.h"

namespace oddsrelay {

struct HistoryRecovery {
  history::SegmentLoad load;
  bool rebuilt = false;    // false: seeded from the recovered state
  std::string why_seeded;  // when not rebuilt
  uint64_t replayed = 0;   // journal records given to the history after the files' end
  uint64_t forgotten = 0;  // events the files still held that the state no longer does
};

// Recovers `engine` from `dir` (recover_data_dir) and `store` with it, and
// leaves `segments` open for appends. Throws as recover_data_dir does.
DataDirRecovery recover_with_history(const std::string& dir, Engine& engine, history::HistoryStore& store,
                                     history::HistorySegments& segments, HistoryRecovery& hr);

}  // namespace oddsrelay
