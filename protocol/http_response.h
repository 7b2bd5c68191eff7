// HTTP/1.1 response framing: status line, headers, body, appended to a
// buffer the connection owns (several pipelined responses share one write).
#pragma once

#include <string>
#include <string_view>

namespace oddsrelay::http {

const char* reason(int status);

struct ResponseHead {
  int status = 200;
  std::string_view content_type = "application/json";
  std::string_view content_encoding;  // "gzip" or empty
  std::string_view extra;             // further header lines, each ending in \r\n
  bool keep_alive = true;
};

// Appends the whole response. For 204 and 304 the body must be empty and no
// Content-Length is sent.
void append_response(std::string& out, const ResponseHead& head, std::string_view body);
// The status line and headers alone, for a body of `body_size` bytes sent
// apart (a shared cached body: protocol/net/out_queue.h).
void append_head(std::string& out, const ResponseHead& head, size_t body_size);

}  // namespace oddsrelay::http
