// Line keys of the odds structure (docs/api.md "Odds"): `s` (main line),
// `s<line>` (a signed decimal: handicap or total rung) and `s<home>:<away>`
// (a scoreline). `special` served with every outcome is the text after `s`.
#pragma once

#include <cstdint>
#include <string_view>

namespace oddsrelay {

enum class LineKeyKind : uint8_t { Invalid, Main, Value, Scoreline };

// Longest key the engine stores inline (Line::key).
inline constexpr size_t kMaxLineKey = 15;

[[nodiscard]] inline LineKeyKind classify_line_key(std::string_view k) {
  if (k.empty() || k[0] != 's' || k.size() > kMaxLineKey) return LineKeyKind::Invalid;
  if (k.size() == 1) return LineKeyKind::Main;
  auto digits = [](std::string_view s) {
    if (s.empty()) return false;
    for (char c : s)
      if (c < '0' || c > '9') return false;
    return true;
  };
  std::string_view v = k.substr(1);
  if (size_t colon = v.find(':'); colon != std::string_view::npos)
    return digits(v.substr(0, colon)) && digits(v.substr(colon + 1)) ? LineKeyKind::Scoreline : LineKeyKind::Invalid;
  if (v[0] == '-' || v[0] == '+') v.remove_prefix(1);
  size_t dot = v.find('.');
  if (dot == std::string_view::npos) return digits(v) ? LineKeyKind::Value : LineKeyKind::Invalid;
  return digits(v.substr(0, dot)) && digits(v.substr(dot + 1)) ? LineKeyKind::Value : LineKeyKind::Invalid;
}

}  // namespace oddsrelay
