// A minimal blocking HTTP/1.1 POST for webhook delivery: one request per
// connection, connect and whole-exchange timeouts, the status code back;
// over TLS when given a client context (relay/webhooks/tls_client.h), verifying the
// endpoint's certificate and host name. Runs on a webhook endpoint's own
// thread, never on a loop.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

typedef struct ssl_ctx_st SSL_CTX;

namespace oddsrelay::relay {

struct PostResult {
  int status = 0;     // HTTP status; 0 = no answer
  std::string error;  // why, when status is 0
};

// `tls` null: plain HTTP; otherwise HTTPS with that context's trust store.
PostResult http_post(const std::string& host, uint16_t port, const std::string& path, std::string_view body,
                     std::string_view extra_headers, int timeout_ms, SSL_CTX* tls = nullptr);

}  // namespace oddsrelay::relay
