// An encoded batch: the /pt-ws frames of the records from..seq of one or
// more engine batches, each with what a stream's filter needs to pass or
// cut it, the INFO that closes them, and the live events they changed
// (/ws). On the wire (docs/api.md) its frames and INFO are a "frame group".
// The hub encodes one per engine batch and shares it across loops
// (SharedBatch); each loop wraps the shared frames once for itself
// (LoopBatch, local_batch in hub.h), fans them out and keeps them in its
// resume window. One template, so the two forms keep the same fields.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/change_set.h"
#include "relay/frame_encoder.h"
#include "relay/shared_frame.h"

namespace oddsrelay::relay {

// One frame of a batch as fan-out sends it. `Ref`: SharedFrame (the hub's,
// shared across loops) or FrameRef (a loop's own reference).
template <class Ref>
struct BatchFrame {
  Ref frame;
  uint64_t channel;  // conflation channel: the event number for odds, 0 otherwise
  int32_t sport;
  bool odds;                      // odds channel (needs 'odds'), else event list (needs 'live')
  std::vector<uint32_t> markets;  // odds: the market ids it names, sorted (empty in connect snapshots)
  uint8_t events = 0;         // event list: the classes of events it was encoded for (kLiveEvents | kPrematchEvents)
  std::vector<Part> parts{};  // its entries (events or markets), for filters that cut it (stream_filter.h)
};
using SharedBatchFrame = BatchFrame<SharedFrame>;
using LoopBatchFrame = BatchFrame<FrameRef>;

// A live event a batch changed (/ws): its number, and its id for the null
// that marks it once it has left the lists.
struct LiveChange {
  uint64_t number;
  std::string key;
};

template <class Ref>
struct EncodedBatch {
  uint64_t from = 0, seq = 0;           // records from..seq
  int64_t at = 0;                       // newest record time in them (feed ms)
  Stamps stamps;                        // the server's clocks on them
  Ref marker;                           // the INFO that closes them: {"seq","from","at",stamps}
  std::vector<BatchFrame<Ref>> frames;  // event lists first, then odds, per engine batch
  std::vector<LiveChange> live;
};

// The hub's: one engine batch, shared by every loop. It also carries the
// batch itself with the state before it, for /ws market subscriptions
// (per subscriber, so not encoded here); a loop reads those as it takes
// the batch and keeps none of them.
struct SharedBatch : EncodedBatch<SharedFrame> {
  // The state was replaced whole (Batch::reset): no frames; every loop
  // closes its streams (1012) and starts over from batch->snapshot.
  bool reset = false;
  BatchPtr batch;
  SnapshotPtr prev;
};
using SharedBatchPtr = std::shared_ptr<const SharedBatch>;

// A loop's: what it fans out and what its resume window holds.
using LoopBatch = EncodedBatch<FrameRef>;

}  // namespace oddsrelay::relay
