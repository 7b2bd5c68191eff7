// Why the relay ends a stream, as one table (like nats-server's ClosedState):
// each reason's WebSocket close code, the text its close frame and the
// access log's close line carry, its name (the `reason` label of
// oddsrelay_stream_closes_total when exposed) and the RelayStats counter
// that counts it. Every close site in the relay names a reason; counting
// goes through count_close, and the /v1/status closed_* fields and the
// /metrics samples are generated from this table (relay_server.cc).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/ws_frame.h"
#include "relay/relay_stats.h"

namespace oddsrelay::relay {

// In the order of their /v1/status fields; those without a field last.
enum class CloseReason : uint8_t {
  QueueLimit,  // over --max-queue-bytes (the hard bound)
  Heartbeat,   // no pong for two ping intervals
  Protocol,    // the client broke the protocol (the parser names code and text)
  Stalled,     // slow consumer: no write progress for --slow-timeout
  SoftLimit,   // slow consumer: over a quarter of the bound for --slow-timeout
  Restart,     // the engine's state was replaced (an edge rejoining its log)
  KeyLimit,    // the key's stream slots are taken: the handshake completes, then this
  PeerClosed,  // the client closed first: its code is echoed (RFC 6455 5.5.1)
  Shutdown,    // the server stops
  Lost,        // the peer went away without a close (never sent: the access log's 1006)
};
inline constexpr size_t kCloseReasons = static_cast<size_t>(CloseReason::Lost) + 1;

struct CloseInfo {
  CloseReason reason;      // its own index, so the table's order is checked
  uint16_t code;           // sent in the close frame (Protocol, PeerClosed: unless the parser or the client names one)
  std::string_view text;   // the close frame's and access log's reason (a detail may follow, close_text)
  std::string_view label;  // its name: the metric label when exposed
  const char* status;      // its /v1/status relay field; null: none of its own
  std::atomic<uint64_t> RelayStats::*counter;  // null: not counted
  bool exposed;                                // a sample of oddsrelay_stream_closes_total
};

inline constexpr std::array<CloseInfo, kCloseReasons> kCloseTable{{
    {CloseReason::QueueLimit, ws::kPolicyViolation, "send queue over limit: client too slow", "queue_limit",
     "closed_slow", &RelayStats::closed_slow, true},
    {CloseReason::Heartbeat, ws::kPolicyViolation, "no pong within", "heartbeat", "closed_heartbeat",
     &RelayStats::closed_heartbeat, true},
    {CloseReason::Protocol, ws::kProtocolError, "protocol error", "protocol", "closed_protocol",
     &RelayStats::closed_protocol, true},
    {CloseReason::Stalled, ws::kPolicyViolation, "client too slow: no write progress for", "stalled", "closed_stalled",
     &RelayStats::closed_stalled, true},
    {CloseReason::SoftLimit, ws::kPolicyViolation, "client too slow: send queue over its soft limit for", "soft_limit",
     "closed_soft_limit", &RelayStats::closed_soft_limit, true},
    {CloseReason::Restart, ws::kServiceRestart, "state replaced: reconnect", "restart", "closed_restart",
     &RelayStats::closed_restart, false},
    // Counted as refused_key_limit, a field listed with the acceptances.
    {CloseReason::KeyLimit, ws::kPolicyViolation, "too many connections for this API key", "key_limit", nullptr,
     &RelayStats::refused_limit, false},
    {CloseReason::PeerClosed, ws::kNormal, "closed by the client", "peer_closed", nullptr, nullptr, false},
    {CloseReason::Shutdown, ws::kGoingAway, "server shutting down", "shutdown", nullptr, nullptr, false},
    {CloseReason::Lost, 1006, "connection lost", "lost", nullptr, nullptr, false},
}};

constexpr const CloseInfo& close_info(CloseReason r) { return kCloseTable[static_cast<size_t>(r)]; }

// The reason's text with a detail after it ("no pong within" + "60 s").
inline std::string close_text(CloseReason r, std::string_view detail) {
  std::string s(close_info(r).text);
  s += ' ';
  s += detail;
  return s;
}

// The one place a close is counted.
inline void count_close(RelayStats& s, CloseReason r) {
  if (auto m = close_info(r).counter) (s.*m).fetch_add(1, std::memory_order_relaxed);
}

}  // namespace oddsrelay::relay
