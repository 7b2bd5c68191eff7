// A minimal blocking HTTP/1.1 POST for webhook delivery: one request per
// connection, connect and whole-exchange timeouts, the status code back.
// Runs on a webhook endpoint's own thread, never on a loop.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace oddsrelay::relay {

struct PostResult {
  int status = 0;     // HTTP status; 0 = no answer
  std::string error;  // why, when status is 0
};

PostResult http_post(const std::string& host, uint16_t port, const std::string& path, std::string_view body,
                     std::string_view extra_headers, int timeout_ms);

}  // namespace oddsrelay::relay
