#include "relay/webhooks/tls_client.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

namespace oddsrelay::relay {

std::string tls_error_text() {
  unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "unknown TLS error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

std::unique_ptr<TlsClientContext> TlsClientContext::create(const std::string& extra_ca_file, std::string& error) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (!ctx) {
    error = "TLS: " + tls_error_text();
    return nullptr;
  }
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  // A missing system store is not fatal: an extra CA file may be all there is.
  SSL_CTX_set_default_verify_paths(ctx);
  if (!extra_ca_file.empty() && SSL_CTX_load_verify_locations(ctx, extra_ca_file.c_str(), nullptr) != 1) {
    error = "cannot load CA file " + extra_ca_file + ": " + tls_error_text();
    SSL_CTX_free(ctx);
    return nullptr;
  }
  return std::unique_ptr<TlsClientContext>(new TlsClientContext(ctx));
}

TlsClientContext::~TlsClientContext() { SSL_CTX_free(ctx_); }

}  // namespace oddsrelay::relay
