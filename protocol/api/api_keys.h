// API keys (--keys FILE, format in docs/api.md): who may call, with which
// permissions, from which addresses, at what rate. Loaded at start and on
// SIGHUP into an immutable KeyStore that the REST thread reads; keys are
// held only as SHA-256 digests and compared in constant time.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/api/origins.h"

namespace oddsrelay::api {

enum Permission : uint32_t {
  kPermLive = 1 << 0,
  kPermPrematch = 1 << 1,
  kPermOdds = 1 << 2,
  kPermScores = 1 << 3,
  kPermWidget = 1 << 4,
  kPermStream = 1 << 5,
};
const char* permission_name(Permission p);

// An IPv4 or IPv6 network; v4 addresses are held as v4-mapped v6.
struct Cidr {
  std::array<uint8_t, 16> addr{};
  int prefix = 128;
  bool contains(const std::array<uint8_t, 16>& ip) const;
};
std::optional<Cidr> parse_cidr(std::string_view s);
// Canonical 16-byte form of a textual address, as Cidr holds it.
std::optional<std::array<uint8_t, 16>> parse_ip(std::string_view s);

using Digest = std::array<uint8_t, 32>;
Digest sha256(std::string_view data);

// A key's webhook endpoint (docs/api.md "Webhooks").
enum WebhookEvent : uint32_t {
  kHookOdds = 1 << 0,        // odds_update
  kHookScore = 1 << 1,       // score_update
  kHookEnded = 1 << 2,       // event_ended
  kHookSettlement = 1 << 3,  // settlement_changed
};
struct WebhookConfig {
  std::string url, host, path;  // http[s]://host[:port]/path
  uint16_t port = 80;
  bool tls = false;    // https://: TLS with certificate and host name checks
  std::string secret;  // HMAC-SHA256 key of X-Signature
  uint32_t events = kHookOdds | kHookScore | kHookEnded | kHookSettlement;
};

struct ApiKey {
  std::string name;
  Digest digest{};
  bool enabled = true;
  bool sandbox = false;
  std::optional<uint32_t> rate_limit;  // requests per 60 s window; none = unlimited
  uint32_t permissions = 0;
  std::vector<Cidr> allow_ips;  // empty = any address
  // Web pages that may use the key from a browser (protocol/api/origins.h); empty =
  // any. Requests without Origin or Referer are not browser requests and
  // are not held to it.
  std::vector<OriginPattern> allow_origins;
  uint32_t ws_connections = 5;      // concurrent /ws + /pt-ws streams (docs/api.md "Limits")
  uint32_t http_connections = 256;  // concurrent HTTP connections that used the key (rest/conn_limits.h)
  std::string widget_json = "{}";   // per-key widget settings, raw JSON
  std::optional<WebhookConfig> webhook;
  bool allows_ip(const std::array<uint8_t, 16>& ip) const;
  bool allows_origin(const WebOrigin& o) const;
};

class KeyStore {
 public:
  // Throws std::runtime_error with a one-line reason on a bad file.
  static std::shared_ptr<const KeyStore> load(const std::string& path);
  static std::shared_ptr<const KeyStore> parse(std::string_view json);
  // A single sandbox key with every permission; `key_out` gets its text.
  static std::shared_ptr<const KeyStore> demo(std::string& key_out);

  // The key matching `presented`, whatever its state (enabled is checked by
  // the caller). Compares digests in constant time against every key.
  const ApiKey* find(std::string_view presented) const;
  size_t size() const { return keys_.size(); }
  template <class F>
  void for_each(F&& f) const {
    for (const ApiKey& k : keys_) f(k);
  }

 private:
  std::vector<ApiKey> keys_;
};

}  // namespace oddsrelay::api
