// What sets the three stream kinds (/pt-ws, /ws, /pt-sse) apart, as one
// table row per kind, like uWebSockets' WebSocketBehavior: the row is chosen
// once, when the connection is made (StreamConn's constructor), and the loop
// (relay_loop.cc) and the outbox read its fields instead of asking which
// route a connection serves. What a kind sends lives in its protocol module
// (stream_module.h); this is only how its connection behaves.
#pragma once

#include <cstdint>
#include <string_view>

#include "protocol/api/stream_upgrade.h"
#include "relay/shared_frame.h"

namespace oddsrelay::relay {

// The loop's protocol modules, by the index a behavior names.
enum class ModuleId : uint8_t { Pt, Ws };
inline constexpr size_t kModules = 2;

struct StreamBehavior {
  const char* path;   // the access log's
  ModuleId module;    // PtStreams (/pt-ws, /pt-sse) or WsStreams (/ws)
  bool reads_client;  // the client speaks WebSocket (SSE: nothing to read)
  bool sse;           // frames go out in their SSE form (Outbox)
  bool can_deflate;   // permessage-deflate may be negotiated
  bool close_frame;   // ends with a close handshake (SSE: the socket just closes)
  bool pongs;         // answers pings (SSE: TCP keepalive finds a vanished peer)
  // The response to the handshake: a 101 or the SSE head.
  FrameRef (*head)(const api::StreamTicket& t, bool deflate);
  // The error frame of a handshake refused past the key's stream limit.
  FrameRef (*refusal)(std::string_view error, uint64_t seq);
};

// The one place the ticket's kind is asked.
const StreamBehavior& behavior_for(api::StreamTicket::Kind kind);

}  // namespace oddsrelay::relay
