// Journal segments: the records applied after a snapshot, checksummed, one
// file per stretch of the log (docs/architecture.md "The log"). A segment
// named journal-<first>.jsonl holds the records at log positions first,
// first+1, ... in order. Replaying one after a restart applies the records
// the snapshot does not already hold; a torn or corrupt tail is reported,
// cut off, and never half-applied. A corrupt record in the middle is
// reported and skipped, and still takes its position, so the positions of
// the records after it do not move.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "engine/core/engine.h"

namespace oddsrelay {

struct SegmentReplay {
  uint64_t records = 0;      // positions the segment holds (intact and corrupt middle lines)
  uint64_t applied = 0;      // records applied (those after `after`)
  uint64_t bad_records = 0;  // corrupt lines skipped (tail included)
  uint64_t truncated_bytes = 0;
  bool torn_tail = false;
};

// Replays the segment at `path`, whose first record is at log position
// `first`, into `engine`, applying only the records after position `after`
// (committing every 256). With `cut_tail`, a bad tail is cut off the file so
// that appends follow intact records. `on_batch`, when set, sees each batch
// committed. Throws std::runtime_error when the file cannot be read or cut.
using OnBatch = std::function<void(const Batch&)>;
SegmentReplay replay_segment(const std::string& path, uint64_t first, uint64_t after, Engine& engine, bool cut_tail,
                             const OnBatch& on_batch = {});

}  // namespace oddsrelay
