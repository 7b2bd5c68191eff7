// What one engine batch changed, for the outputs (relay frames, /ws
// triggers, webhooks, settlement): per event, what kind of change, and which
// markets were replaced. Built by the engine alongside the new snapshot.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/core/snapshot.h"
#include "protocol/feed_record.h"

namespace oddsrelay {

enum ChangeBits : uint8_t {
  kEventAdded = 1 << 0,    // became listed
  kEventChanged = 1 << 1,  // event object replaced while listed
  kEventRemoved = 1 << 2,  // left the lists
  kScoreChanged = 1 << 3,
  kStatsChanged = 1 << 4,
  kOddsChanged = 1 << 5,
  kFinalChanged = 1 << 6,  // settlement anchor set or corrected
  kEventEvicted = 1 << 7,  // left the state at the retention horizon (engine/core/retention.h)
};

struct EventChange {
  uint64_t number = 0;
  int32_t sport = 0;  // sport after the batch (before it, for a removal)
  bool live = false;  // live after the batch (before it, for a removal)
  uint8_t bits = 0;   // ChangeBits
  // Its first `ended` (the final fixed) came in this batch; a correction of
  // an earlier final has kFinalChanged only. Outputs that announce an end
  // (webhooks' event_ended) read it here rather than keep the state before.
  bool ended = false;
  uint32_t markets_first = 0, markets_count = 0;  // its range of Batch::markets
};

// One published batch: the snapshot it produced, what changed, and the
// records that were applied (in order), for the journal and capture.
struct Batch {
  SnapshotPtr snapshot;
  uint64_t first_seq = 0;            // log position of records.front(); snapshot->seq is that of records.back()
  std::vector<EventChange> changes;  // in order of first change within the batch
  std::vector<uint32_t> markets;     // replaced or removed market ids, per change, sorted, unique
  std::vector<feed::Record> records;
  int64_t newest_at = 0;  // the largest `at` of `records` (0: none), noted as they applied
  int64_t sealed_us = 0;  // wall clock (us since the epoch) when the engine had applied it all; the relay's INFO stamps
  // When its first record arrived (Record::arrived_ns), on sealed_us's wall
  // clock: sealed_us minus the monotonic time since; 0 = none was stamped.
  // sealed_us - arrived_us is the batch's queueing and batching.
  int64_t arrived_us = 0;
  // The state was replaced whole (an edge rejoining its log after a hole,
  // Engine::replace_state): no records, no changes, and nothing before it
  // leads to `snapshot`; outputs start over from it.
  bool reset = false;
  // The pipeline took it from a backlog (Pipeline::kCatchUpBacklog: a
  // replay at max speed, an edge catching up), or is within kCatchUpTail
  // batches of one that it did: the engine is behind its source. The
  // journal relaxes compaction meanwhile (log_writer.h).
  bool catch_up = false;
  int64_t apply_start_ns =
      0;  // steady clock when the engine began the batch (protocol/metrics/data_path.h); 0: unknown

  std::span<const uint32_t> markets_of(const EventChange& c) const {
    return std::span<const uint32_t>(markets).subspan(c.markets_first, c.markets_count);
  }
};

using BatchPtr = std::shared_ptr<const Batch>;

}  // namespace oddsrelay
