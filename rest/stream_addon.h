// The live stream add-on (docs/api.md "Stream add-on"): for an event with
// coverage, a player URL signed with HMAC-SHA256 over (event, key, expiry)
// under a secret the server draws at start; /stream/play checks it. Only
// the signing and checking live here; routes are in rest/api/stream.cc.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/api/origins.h"
#include "rest/vocabulary.h"

namespace oddsrelay::rest {

struct StreamOptions {
  std::vector<int32_t> sports = {1, 2, 5};  // live events of these sports have a stream
  int64_t ttl_s = 3600;                     // lifetime of a signed URL
};

// Where signed player URLs point: the --public-url base when set (so they
// say https:// behind a TLS-terminating proxy), else http://<Host>; empty
// without either (the URL is then relative).
std::string stream_base(const PublicUrl& pub, std::string_view host);

class StreamSigner {
 public:
  StreamSigner();  // a fresh random secret
  explicit StreamSigner(std::string_view secret) : secret_(secret) {}

  // Lowercase hex HMAC-SHA256 of "<event>|<key>|<exp>".
  std::string sign(std::string_view event, std::string_view key, int64_t exp) const;

  enum class Check { Ok, BadSignature, Expired };
  Check verify(std::string_view event, std::string_view key, int64_t exp, std::string_view sig, int64_t now_s) const;

 private:
  std::string secret_;
};

}  // namespace oddsrelay::rest
