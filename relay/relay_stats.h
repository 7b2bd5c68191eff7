// The relay's counters, bumped by the loops, the hub and the outbox and
// read by /v1/status and /metrics (any thread), in a header of their own so
// that the lower relay files count without including the top object
// (relay_server.h). relay_stats.cc describes them once for both readers.
#pragma once

#include <atomic>
#include <cstdint>

#include "protocol/metrics/stat_table.h"

namespace oddsrelay::relay {

// Counters for /v1/status and the tests; any thread.
struct RelayStats {
  std::atomic<uint64_t> pt_connections{0}, ws_connections{0};
  std::atomic<uint64_t> accepted{0}, refused_limit{0};
  std::atomic<uint64_t> batches{0}, frames_encoded{0}, deliveries{0}, bytes_written{0};
  // Socket writes (one per connection per pass, whatever it carries), and
  // the times a loop took batches that arrived while it was writing
  // (RelayLoop::finish_turn): writes per delivered frame is what fan-out
  // costs, since a send costs about the same whatever its size.
  std::atomic<uint64_t> writes{0}, mid_write_intakes{0}, paced_passes{0};
  // permessage-deflate: streams that negotiated it (ever), frames compressed
  // (once per loop per frame, not per stream).
  std::atomic<uint64_t> deflate_negotiated{0}, frames_deflated{0};
  std::atomic<uint64_t> conflated{0}, closed_slow{0}, closed_heartbeat{0}, closed_protocol{0};
  std::atomic<uint64_t> closed_stalled{0}, closed_soft_limit{0};  // slow consumers, by reason
  std::atomic<uint64_t> closed_restart{0};  // closed because the state was replaced (an edge rejoining its log)
  std::atomic<uint64_t> resumed{0}, resume_refused{0};
  // The resume window: groups and bytes held, and the oldest seq a client
  // may resume from.
  std::atomic<uint64_t> window_groups{0}, window_bytes{0}, window_oldest{0};
};

// RelayStats described once: the /v1/status "relay" fields, in order, and
// the /metrics families those that are exposed belong to; `resume_window`
// is the nested "resume_window" object.
metrics::StatTable<RelayStats> relay_stats();
metrics::StatTable<RelayStats> resume_window_stats();

}  // namespace oddsrelay::relay
