// A WebSocket frame as a client sends it (RFC 6455 5.2), for the protocol
// tests that feed the server's frame parser: masked with a fixed key
// unless `mask` is false, the length in the shortest header form.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace oddsrelay::test {

// `first` is the first header byte (FIN, RSV bits and opcode).
inline std::string client_frame(uint8_t first, std::string_view payload, bool mask = true) {
  std::string f;
  f += static_cast<char>(first);
  uint8_t m = mask ? 0x80 : 0;
  if (payload.size() < 126) {
    f += static_cast<char>(m | payload.size());
  } else if (payload.size() < 65536) {
    f += static_cast<char>(m | 126);
    f += static_cast<char>(payload.size() >> 8);
    f += static_cast<char>(payload.size() & 0xff);
  } else {
    f += static_cast<char>(m | 127);
    for (int i = 7; i >= 0; --i) f += static_cast<char>((static_cast<uint64_t>(payload.size()) >> (8 * i)) & 0xff);
  }
  const unsigned char key[4] = {0x37, 0xfa, 0x21, 0x3d};
  if (mask) f.append(reinterpret_cast<const char*>(key), 4);
  for (size_t i = 0; i < payload.size(); ++i) f += mask ? static_cast<char>(payload[i] ^ key[i & 3]) : payload[i];
  return f;
}

}  // namespace oddsrelay::test
