// Strict UTF-8 validation (RFC 3629): no overlong forms, no surrogates,
// nothing above U+10FFFF. WebSocket text messages and close reasons that
// fail it are closed with 1007 (RFC 6455 section 8.1).
#pragma once

#include <cstdint>
#include <string_view>

namespace oddsrelay {

[[nodiscard]] inline bool valid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    int n;
    uint32_t cp, min;
    if ((c & 0xe0) == 0xc0)
      n = 1, cp = c & 0x1f, min = 0x80;
    else if ((c & 0xf0) == 0xe0)
      n = 2, cp = c & 0x0f, min = 0x800;
    else if ((c & 0xf8) == 0xf0)
      n = 3, cp = c & 0x07, min = 0x10000;
    else
      return false;
    if (end - p <= n) return false;
    for (int i = 1; i <= n; ++i) {
      if ((p[i] & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (p[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    p += n + 1;
  }
  return true;
}

}  // namespace oddsrelay
