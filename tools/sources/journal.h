// The journal: every applied record, checksummed, in <data-dir>/journal.jsonl
// (DESIGN.md "Durability"). On start it is replayed into the engine before
// anything else runs; a torn or corrupt tail is reported, cut off, and never
// half-applied. A corrupt record in the middle is reported and skipped, like
// any malformed feed line.
#pragma once

#include <cstdint>
#include <string>

#include "engine/engine.h"

namespace oddsrelay {

struct JournalRecovery {
  uint64_t records = 0;        // applied
  uint64_t bad_records = 0;    // corrupt lines skipped (tail included)
  uint64_t truncated_bytes = 0;
  bool torn_tail = false;
};

std::string journal_path(const std::string& data_dir);

// Creates data_dir if needed, replays its journal into `engine` (committing
// in batches of 256), and cuts a bad tail off the file. Throws
// std::runtime_error when the directory or file is unusable (start-up only).
JournalRecovery recover_journal(const std::string& data_dir, Engine& engine);

}  // namespace oddsrelay
