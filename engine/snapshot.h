// One immutable version of the whole engine state, published after every
// batch. Any thread may hold a snapshot for as long as it likes; holding one
// never blocks the writer and never sees a later batch's changes.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/event_map.h"

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

// The single publication point: the engine thread publishes, any thread
// loads. A two-phase epoch scheme rather than std::atomic<shared_ptr>, whose
// libstdc++ 12 form spins on a lock bit and uses fences ThreadSanitizer
// cannot check:
//   load()    wait-free in practice: register in the current phase's reader
//             count, copy the shared_ptr out of the current box, unregister.
//   publish() never waits: swap in a new box and retire the old one; retired
//             boxes are freed once the phase they were retired in has no
//             readers left (checked again at each publish).
// The snapshot itself lives as long as any reader's SnapshotPtr holds it.
class SnapshotStore {
 public:
  SnapshotStore();
  ~SnapshotStore();
  SnapshotStore(const SnapshotStore&) = delete;
  SnapshotStore& operator=(const SnapshotStore&) = delete;

  SnapshotPtr load() const;       // any thread
  void publish(SnapshotPtr s);    // the one writer thread only
  size_t retired() const { return retired_now_.size() + retired_flipped_.size(); }  // writer only

 private:
  struct Box {
    SnapshotPtr snap;
  };
  void reclaim();

  std::atomic<Box*> cur_;
  mutable std::atomic<uint32_t> readers_[2] = {0, 0};  // readers inside load(), per phase
  std::atomic<uint32_t> phase_{0};
  // Writer-only: boxes retired in the current phase, and those retired
  // before the last flip, waiting for the old phase's readers to drain.
  std::vector<Box*> retired_now_, retired_flipped_;
};

}  // namespace oddsrelay
