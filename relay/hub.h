// The hub: turns each engine batch into the frames every stream of every
// relay loop sends, encoded once, immutable, shared by reference (a Turn).
// It knows no sockets and no subscribers; the loops (relay_loop.h) pick
// what each stream admits. Runs on the thread that delivers batches
// (pipeline.h sinks), one batch at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "engine/core/change_set.h"
#include "relay/frame_encoder.h"
#include "relay/resume_window.h"
#include "relay/shared_frame.h"

namespace oddsrelay::relay {

struct RelayStats;

// A group frame as the hub shares it across loops (GroupFrame's fields,
// with the bytes shared).
struct HubFrame {
  SharedFrame frame;
  uint64_t channel;
  int32_t sport;
  bool odds;
  std::vector<uint32_t> markets;
  uint8_t events = 0;
  std::vector<Part> parts;
};

// One batch, encoded: the /pt-ws group (event lists first, then odds) and
// the INFO that closes it, the live events it changed (/ws), and the batch
// itself with the state before it, for /ws market subscriptions, which
// are per subscriber.
struct Turn {
  // The state was replaced whole (Batch::reset): no frames; every loop
  // closes its streams (1012) and starts over from batch->snapshot.
  bool reset = false;
  uint64_t from = 0, seq = 0;
  int64_t at = 0;  // newest record time (feed ms)
  Stamps stamps;
  SharedFrame marker;
  std::vector<HubFrame> frames;
  std::vector<LiveChange> live;
  BatchPtr batch;
  SnapshotPtr prev;
};
using TurnPtr = std::shared_ptr<const Turn>;

class Hub {
 public:
  Hub(SnapshotPtr start, RelayStats& stats) : snap_(std::move(start)), stats_(stats) {}
  // Null when the batch is already part of the state the loops started
  // from.
  TurnPtr encode(const BatchPtr& batch);
  const SnapshotPtr& state() const { return snap_; }

 private:
  SnapshotPtr snap_;
  RelayStats& stats_;
};

// A turn as one loop holds it: each shared frame wrapped once for this
// loop (FrameRef::local), ready for fan-out and the loop's resume window.
Group local_group(const Turn& t);
// Several turns a loop took at once (it was busy while they came) as one
// group, as before there were loops: their frames in order and one INFO
// for all, encoded by this loop; one turn: local_group.
Group local_group(std::span<const TurnPtr> turns);

// One evt:<sport> frame per run of equal sports in `events` (sorted by
// sport), for streams that see `classes` of events.
void append_event_frames(const std::vector<std::pair<int32_t, EventItem>>& events, uint8_t classes,
                         std::vector<GroupFrame>& out);

// Wall clock in microseconds since the Unix epoch (the INFO stamps).
int64_t wall_us();

}  // namespace oddsrelay::relay
