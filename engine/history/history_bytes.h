// Where the odds history's bytes are: each structure's heap bytes as
// allocated (vectors at capacity), summed over every event by
// HistoryStore::breakdown. perf/history/bench_history prints it beside
// the allocator's own count, so that the figure the memory bound and
// /v1/status use (HeldState::bytes) can be checked against both.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace oddsrelay::history {

struct HistoryBytes {
  uint64_t markets = 0, outcomes = 0, layouts = 0;  // counts
  uint64_t events = 0;                              // the index's entries and each EventHistory
  uint64_t market_heads = 0;                        // per market: its log's and its writer state's fixed part
  uint64_t log = 0;                                 // the entries (points, seqs, times), at capacity
  uint64_t log_slack = 0;                           // of which capacity past the size
  uint64_t layouts_bytes = 0;                       // the layouts' bytes, offsets and hashes
  uint64_t outcome_keys = 0;                        // per outcome: its name and last quote (16 bytes by number)
  uint64_t writer = 0;                              // per market: current layout, line keys, numbers by layout
  uint64_t bases = 0;                               // base states after a cut or a seed
  uint64_t clock = 0;                               // the clock index

  std::vector<std::pair<const char*, uint64_t>> parts() const {
    return {{"events", events},         {"market heads", market_heads},
            {"log (at capacity)", log}, {"  of which slack", log_slack},
            {"layouts", layouts_bytes}, {"outcomes", outcome_keys},
            {"writer state", writer},   {"base states", bases},
            {"clock index", clock}};
  }
};

}  // namespace oddsrelay::history
