// Strict UTF-8 validation (RFC 3629): no overlong forms, no surrogates,
// nothing above U+10FFFF. WebSocket text messages and close reasons that
// fail it are closed with 1007 (RFC 6455 section 8.1); query parameters
// are made valid (replace_invalid_utf8) before anything reads them.
#pragma once

#include <cstdint>
#include <string>
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

// `s` with every byte that does not begin a valid sequence read as U+FFFD
// (the valid sequences kept as they are): for text from outside that an
// answer may echo, such as a query parameter, so that the answer stays
// UTF-8 (JSON text must be) whatever the request held.
[[nodiscard]] inline std::string replace_invalid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
    if (n != 0 && i + n <= s.size() && valid_utf8(s.substr(i, n))) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out.append("\xEF\xBF\xBD");
      ++i;
    }
  }
  return out;
}

}  // namespace oddsrelay
