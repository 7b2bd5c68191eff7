// libFuzzer target for the WebSocket frame parser (protocol/ws_frame.h),
// fed in pieces as a socket delivers bytes. Checks the contract: consumed
// bytes never exceed what was given, a finished parser consumes nothing
// more, and only RFC close codes come out of on_error.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "protocol/ws_frame.h"

using namespace oddsrelay::ws;

namespace {
struct Sink {
  void on_message(Opcode op, std::string_view p) {
    if (op != kText && op != kBinary) std::abort();
    if (op == kText && !oddsrelay::valid_utf8(p)) std::abort();
  }
  void on_ping(std::string_view p) {
    if (p.size() > 125) std::abort();
  }
  void on_pong(std::string_view p) {
    if (p.size() > 125) std::abort();
  }
  void on_close(uint16_t, std::string_view) {}
  void on_error(uint16_t c, const char*) {
    if (c != kProtocolError && c != kInvalidPayload && c != kMessageTooBig) std::abort();
  }
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t step = 1 + data[0] % 32;
  FrameParser parser(4096);
  Sink sink;
  std::string buf;
  for (size_t fed = 1; fed < size && !parser.done();) {
    size_t n = std::min(step, size - fed);
    buf.append(reinterpret_cast<const char*>(data) + fed, n);
    fed += n;
    size_t used = parser.feed(buf.data(), buf.size(), sink);
    if (used > buf.size()) std::abort();
    buf.erase(0, used);
  }
  return 0;
}
