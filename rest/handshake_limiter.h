// The per-key bound on stream handshakes (/ws, /pt-ws; docs/api.md
// "Streams"): a token bucket per key that holds `per_slot` handshakes for
// each of the key's connection slots and refills at that many a minute.
// It is apart from the REST rate limit on purpose: a desk at its REST quota
// must still be able to reconnect its streams, and a client reconnecting in
// a loop must not take the server's time. Shared by the REST loops (one
// mutex: handshakes are rare next to requests);
// keyed by key digest, so a keys reload keeps the buckets.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "protocol/api/api_keys.h"
#include "rest/rate_limiter.h"
#include "rest/vocabulary.h"

namespace oddsrelay::rest {

class HandshakeLimiter {
 public:
  // per_slot: handshakes per minute per connection slot; 0 = no bound.
  explicit HandshakeLimiter(uint32_t per_slot) : per_slot_(per_slot) {}

  // Takes one handshake of `key` at `now_ms` (a monotonic clock). Sandbox
  // keys are never bounded (sandbox keys have no rate limits). `limit` is the
  // bucket's size, `retry_after` the seconds until one handshake is back.
  RateLimiter::Verdict check(const ApiKey& key, int64_t now_ms);

 private:
  struct Bucket {
    double tokens = 0;
    int64_t at_ms = 0;  // when `tokens` was computed
  };
  uint32_t per_slot_;
  std::mutex mu_;
  std::unordered_map<std::string, Bucket> buckets_;
};

}  // namespace oddsrelay::rest
