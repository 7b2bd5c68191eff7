// The /pt-ws text frame (docs/api.md "/pt-ws"): <type> 0x1F <channel>
// 0x1F <JSON body>, e.g. "P\x1F" "odds:1:10000001" "\x1F{...}". Channels:
// `evt:<sportId>` and `odds:<sportId>:<eventNumber>`; the ready signal is
// type INFO on channel PUB.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace oddsrelay::relay {

inline constexpr char kSep = '\x1F';

inline void append_relay_frame(std::string& out, std::string_view type, std::string_view channel,
                               std::string_view body) {
  out.append(type);
  out += kSep;
  out.append(channel);
  out += kSep;
  out.append(body);
}

struct RelayFrame {
  std::string_view type, channel, body;
};

// Splits a frame; nullopt unless it has both separators and a non-empty
// type and channel (the body may itself contain 0x1F only inside JSON
// strings, which JSON escapes, so the first two separators are the fields').
[[nodiscard]] inline std::optional<RelayFrame> parse_relay_frame(std::string_view f) {
  size_t a = f.find(kSep);
  if (a == std::string_view::npos || a == 0) return std::nullopt;
  size_t b = f.find(kSep, a + 1);
  if (b == std::string_view::npos || b == a + 1) return std::nullopt;
  return RelayFrame{f.substr(0, a), f.substr(a + 1, b - a - 1), f.substr(b + 1)};
}

}  // namespace oddsrelay::relay
