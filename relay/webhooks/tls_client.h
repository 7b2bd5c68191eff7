// TLS for outbound webhook deliveries (https:// endpoints). One client
// context per process holds the trust store: the system's CA certificates,
// plus an operator's extra CA file (a private CA, or a test's self-signed
// certificate). Every connection verifies the peer's chain and its host name;
// there is no switch to turn that off. Endpoint threads share the context and
// each owns its connections, as OpenSSL allows once the context is set up.
#pragma once

#include <memory>
#include <string>

typedef struct ssl_ctx_st SSL_CTX;

namespace oddsrelay::relay {

class TlsClientContext {
 public:
  // Null and `error` set when the CA file cannot be read or OpenSSL fails.
  static std::unique_ptr<TlsClientContext> create(const std::string& extra_ca_file, std::string& error);
  ~TlsClientContext();
  TlsClientContext(const TlsClientContext&) = delete;
  TlsClientContext& operator=(const TlsClientContext&) = delete;

  SSL_CTX* get() const { return ctx_; }

 private:
  explicit TlsClientContext(SSL_CTX* ctx) : ctx_(ctx) {}
  SSL_CTX* ctx_;
};

// The first error on this thread's OpenSSL error queue as text (and the queue cleared).
std::string tls_error_text();

}  // namespace oddsrelay::relay
