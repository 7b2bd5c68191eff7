// A canonical text dump of a snapshot and its hash: the yardstick for
// "byte-identical state" (capture/replay identity, journal recovery). The
// dump starts with the clocks retention depends on (the last and the newest
// `at` applied) and the count of events evicted, then lists every event in
// number order with its event object, odds (timestamps included), score and
// stats. Counters derived from the events (ended, bytes) are not in it.
#pragma once

#include <cstdint>
#include <string>

#include "engine/snapshot.h"

namespace oddsrelay {

std::string dump_state(const Snapshot& s);
uint64_t state_digest(const Snapshot& s);  // XXH3-64 of dump_state

}  // namespace oddsrelay
