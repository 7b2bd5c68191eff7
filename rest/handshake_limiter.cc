#include "rest/handshake_limiter.h"

#include <algorithm>
#include <cmath>

namespace oddsrelay::rest {

RateLimiter::Verdict HandshakeLimiter::check(const ApiKey& key, int64_t now_ms) {
  RateLimiter::Verdict v;
  if (key.sandbox || per_slot_ == 0) return v;
  const double size = static_cast<double>(per_slot_) * std::max<uint32_t>(1, key.ws_connections);
  v.limit = static_cast<uint32_t>(size);
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, fresh] =
      buckets_.try_emplace(std::string(reinterpret_cast<const char*>(key.digest.data()), key.digest.size()));
  Bucket& b = it->second;
  if (fresh) b = Bucket{size, now_ms};
  // Refill: `size` handshakes a minute, never past a full bucket.
  b.tokens = std::min(size, b.tokens + static_cast<double>(now_ms - b.at_ms) * size / 60'000.0);
  b.at_ms = now_ms;
  if (b.tokens < 1) {
    v.allowed = false;
    v.retry_after = std::max(1, static_cast<int>(std::ceil((1 - b.tokens) * 60.0 / size)));
    return v;
  }
  b.tokens -= 1;
  return v;
}

}  // namespace oddsrelay::rest
