// One immutable version of the whole engine state, published after every
// batch. Any thread may hold a snapshot for as long as it likes; holding one
// never blocks the writer and never sees a later batch's changes.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/event_map.h"
#include "engine/published.h"

namespace oddsrelay {

struct SportCount {
  int32_t sport = 0;
  uint32_t live = 0;
  uint32_t prematch = 0;
};

struct Snapshot {
  uint64_t seq = 0;          // batch number that produced it; 0 = empty state
  int64_t clock = 0;         // engine clock: `at` of the last applied record
  int64_t last_live_at = 0;  // `at` of the last change to a live event's listing
  EventMap events;
  std::vector<SportCount> sports;  // listed events per sport, sorted by sport id
  uint64_t listed_live = 0, listed_prematch = 0;
  uint64_t markets = 0;  // markets held across all events
  uint64_t outcomes = 0;
};

using SnapshotPtr = std::shared_ptr<const Snapshot>;

// The single publication point of engine state: the engine thread
// publishes, any thread loads (see published.h).
class SnapshotStore : public Published<Snapshot> {
 public:
  SnapshotStore() : Published<Snapshot>(std::make_shared<const Snapshot>()) {}
};

}  // namespace oddsrelay
