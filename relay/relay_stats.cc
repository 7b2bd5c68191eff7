// RelayStats described once (relay_stats.h): the /v1/status "relay" fields
// and the /metrics families, the closed_* ones generated from the
// close-reason table (close_reason.h).
#include "relay/relay_stats.h"

#include <array>
#include <string_view>

#include "relay/close_reason.h"

namespace oddsrelay::relay {

namespace {

using metrics::Label;
using metrics::Series;
using metrics::Type;
using Stat = metrics::Stat<RelayStats>;

constexpr std::string_view kClosesHelp =
    "Streams the server closed, by reason (queue_limit, stalled, soft_limit: slow consumers; heartbeat; protocol).";
constexpr Series closes(std::string_view reason) {
  return {"oddsrelay_stream_closes_total", Type::Counter, kClosesHelp, {"reason", reason}};
}

constexpr Stat kAcceptStats[] = {
    {"pt_ws_connections",
     &RelayStats::pt_connections,
     {"oddsrelay_stream_subscribers", Type::Gauge, "Streams connected, by stream.", {"stream", "pt-ws"}}},
    {"ws_connections",
     &RelayStats::ws_connections,
     {"oddsrelay_stream_subscribers", Type::Gauge, {}, {"stream", "ws"}}},
    {"accepted",
     &RelayStats::accepted,
     {"oddsrelay_stream_accepted_total", Type::Counter, "Streams accepted (within their key's slots)."}},
    {"refused_key_limit", &RelayStats::refused_limit},  // oddsrelay_rate_limited_total{limit="stream_slots"}
    {"batches", &RelayStats::batches},
    {"frames_encoded", &RelayStats::frames_encoded},
    {"deliveries",
     &RelayStats::deliveries,
     {"oddsrelay_stream_frames_delivered_total", Type::Counter,
      "Frames queued to subscribers (one per frame per subscriber)."}},
    {"bytes_written",
     &RelayStats::bytes_written,
     {"oddsrelay_stream_written_bytes_total", Type::Counter, "Bytes written to stream sockets."}},
    {"writes",
     &RelayStats::writes,
     {"oddsrelay_stream_writes_total", Type::Counter,
      "Writes to stream sockets (one per connection per loop pass, however many frames it carries)."}},
    {"mid_write_intakes", &RelayStats::mid_write_intakes},
    {"paced_passes", &RelayStats::paced_passes},              // --relay-pace (write_pace.h)
    {"deflate_negotiated", &RelayStats::deflate_negotiated},  // permessage-deflate (docs/architecture.md)
    {"frames_deflated", &RelayStats::frames_deflated},
    {"conflated",
     &RelayStats::conflated,
     {"oddsrelay_stream_frames_conflated_total", Type::Counter,
      "Queued frames replaced by a newer one of their channel while a write was in flight."}},
};
constexpr Stat kResumeStats[] = {
    {"resumed", &RelayStats::resumed},
    {"resume_refused", &RelayStats::resume_refused},
};

// The closed_* fields, from the close-reason table (close_reason.h): each
// reason with a status field of its own, a closes{reason} sample if exposed.
constexpr size_t kCloseStats = [] {
  size_t n = 0;
  for (const CloseInfo& r : kCloseTable) n += r.status != nullptr;
  return n;
}();

constexpr auto kRelayStats = [] {
  std::array<Stat, std::size(kAcceptStats) + kCloseStats + std::size(kResumeStats)> all{};
  size_t i = 0;
  for (const Stat& s : kAcceptStats) all[i++] = s;
  for (const CloseInfo& r : kCloseTable)
    if (r.status) all[i++] = Stat{r.status, r.counter, r.exposed ? closes(r.label) : Series{}};
  for (const Stat& s : kResumeStats) all[i++] = s;
  return all;
}();

constexpr Stat kResumeWindowStats[] = {
    {"groups", &RelayStats::window_groups},
    {"bytes", &RelayStats::window_bytes},
    {"oldest_seq", &RelayStats::window_oldest},
};

}  // namespace

metrics::StatTable<RelayStats> relay_stats() { return kRelayStats; }
metrics::StatTable<RelayStats> resume_window_stats() { return kResumeWindowStats; }

}  // namespace oddsrelay::relay
