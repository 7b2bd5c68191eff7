// The hub: turns each engine batch into the frames every stream of every
// relay loop sends, encoded once, immutable, shared by reference (a
// SharedBatch, encoded_batch.h).
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
#include "relay/encoded_batch.h"
#include "relay/frame_encoder.h"
#include "relay/shared_frame.h"

namespace oddsrelay::relay {

struct RelayStats;

class Hub {
 public:
  Hub(SnapshotPtr start, RelayStats& stats) : snap_(std::move(start)), stats_(stats) {}
  // Null when the batch is already part of the state the loops started
  // from.
  SharedBatchPtr encode(const BatchPtr& batch);
  const SnapshotPtr& state() const { return snap_; }

 private:
  SnapshotPtr snap_;
  RelayStats& stats_;
};

// A shared batch as one loop holds it: each shared frame wrapped once for
// this loop (FrameRef::local), ready for fan-out and the loop's resume
// window.
LoopBatch local_batch(const SharedBatch& b);
// Several shared batches a loop took at once (it was busy while they came)
// as one, as before there were loops: their frames in order and one INFO
// for all, encoded by this loop; one batch: local_batch of it.
LoopBatch local_batch(std::span<const SharedBatchPtr> batches);

// One evt:<sport> frame per run of equal sports in `events` (sorted by
// sport), for streams that see `classes` of events.
void append_event_frames(const std::vector<std::pair<int32_t, EventItem>>& events, uint8_t classes,
                         std::vector<LoopBatchFrame>& out);

// Wall clock in microseconds since the Unix epoch (the INFO stamps).
int64_t wall_us();

}  // namespace oddsrelay::relay
