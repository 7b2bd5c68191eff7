// The three stream kinds' rows (stream_behavior.h).
#include "relay/stream_behavior.h"

#include <string>

#include "relay/frame_encoder.h"
#include "relay/sse.h"

namespace oddsrelay::relay {

namespace {

FrameRef upgrade_head(const api::StreamTicket& t, bool deflate) { return upgrade_response(t.accept, deflate); }
FrameRef sse_stream_head(const api::StreamTicket&, bool) { return sse_head(); }

// /pt-ws and /pt-sse: the error as a bare JSON text frame (docs/api.md).
FrameRef pt_refusal(std::string_view error, uint64_t) {
  return text_frame(std::string("{\"error\":\"").append(error).append("\"}"));
}
FrameRef ws_refusal(std::string_view error, uint64_t seq) { return ws_error(error, seq); }

constexpr StreamBehavior kPtWs{"/pt-ws", ModuleId::Pt, true, false, true, true, true, upgrade_head, pt_refusal};
constexpr StreamBehavior kWs{"/ws", ModuleId::Ws, true, false, true, true, true, upgrade_head, ws_refusal};
constexpr StreamBehavior kPtSse{"/pt-sse", ModuleId::Pt, false, true, false, false, false, sse_stream_head, pt_refusal};

}  // namespace

const StreamBehavior& behavior_for(api::StreamTicket::Kind kind) {
  switch (kind) {
    case api::StreamTicket::Kind::Ws:
      return kWs;
    case api::StreamTicket::Kind::Sse:
      return kPtSse;
    case api::StreamTicket::Kind::PtWs:
      break;
  }
  return kPtWs;
}

}  // namespace oddsrelay::relay
