// One immutable version of the whole engine state, published after every
// batch. Any thread may hold a snapshot for as long as it likes; holding one
// never blocks the writer and never sees a later batch's changes.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/event_map.h"
#include "engine/core/published.h"

namespace oddsrelay {

struct SportCount {
  int32_t sport = 0;
  uint32_t live = 0;
  uint32_t prematch = 0;
};

struct Snapshot {
  // The log position: how many records have been applied since the log
  // began (its epoch), this state included; 0 = empty state. The same seq
  // means the same state on every relay that follows the same log.
  uint64_t seq = 0;
  std::string epoch;         // names the log; short (fits the string's inline buffer)
  int64_t clock = 0;         // engine clock: `at` of the last applied record
  int64_t feed_clock = 0;    // the newest `at` applied (a max: records may go back in time); retention's clock
  int64_t last_live_at = 0;  // `at` of the last change to a live event's listing
  uint64_t evicted = 0;      // events that left at the retention horizon since the log began (engine/core/retention.h)
  int64_t retain_ended_ms = 0;  // the horizon this state is kept with (configuration, not state)
  EventMap events;
  std::vector<SportCount> sports;  // listed events per sport, sorted by sport id
  uint64_t listed_live = 0, listed_prematch = 0;
  uint64_t markets = 0;  // markets held across all events
  uint64_t outcomes = 0;
  // Derived from the events (rebuilt when a snapshot file is loaded), for
  // /v1/status: held events with a final score, those of them still listed
  // live / pre-match, and the estimated bytes the state holds.
  uint64_t ended = 0, ended_live = 0, ended_prematch = 0;
  uint64_t bytes = 0;
};

using SnapshotPtr = std::shared_ptr<const Snapshot>;

// The single publication point of engine state: the engine thread
// publishes, any thread loads (see published.h).
class SnapshotStore : public Published<Snapshot> {
 public:
  SnapshotStore() : Published<Snapshot>(std::make_shared<const Snapshot>()) {}
};

}  // namespace oddsrelay
