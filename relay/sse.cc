// Server-Sent Events framing of the relay's frames (sse.h).
#include "relay/sse.h"

#include <string>

#include "protocol/relay_frame.h"
#include "protocol/ws_frame.h"
#include "relay/frame_encoder.h"

namespace oddsrelay::relay {

// Access-Control-Allow-Origin as on every REST answer (protocol/http_response):
// the router has already turned away an origin the key's allow_origins does
// not list, and without the header a page on another origin (a desk's own
// site) could not read the stream with EventSource.
FrameRef sse_head() {
  return raw_bytes(
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
      "X-Accel-Buffering: no\r\nAccess-Control-Allow-Origin: *\r\nConnection: close\r\n\r\nretry: 1000\n\n");
}

FrameRef sse_event(const FrameRef& ws, std::string_view epoch) {
  const std::string_view bytes = ws->bytes();
  const auto op = static_cast<ws::Opcode>(static_cast<unsigned char>(bytes[0]) & 0x0f);
  if (op == ws::kPing) return raw_bytes(": ping\n\n");
  if (op != ws::kText) return FrameRef();
  const std::string_view payload = ws::frame_payload(bytes);
  std::string e;
  e.reserve(payload.size() + 48);
  if (payload.starts_with("INFO")) {
    // The position the INFO brings the client to: "seq":N of its JSON.
    const size_t at = payload.find("\"seq\":");
    if (at != std::string_view::npos) {
      const size_t from = at + 6, end = payload.find_first_not_of("0123456789", from);
      e.append("id: ").append(epoch).append(":").append(payload.substr(from, end - from)).append("\n");
    }
  }
  e.append("data: ").append(payload).append("\n\n");
  return raw_bytes(e);
}

}  // namespace oddsrelay::relay
