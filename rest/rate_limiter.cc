#include "rest/rate_limiter.h"

namespace oddsrelay::rest {

RateLimiter::Verdict RateLimiter::check(const ApiKey& key, int64_t now_s) {
  Verdict v;
  if (key.sandbox || !key.rate_limit) return v;
  v.limit = *key.rate_limit;
  const int64_t bucket = now_s / window_;
  if (bucket != swept_) {
    swept_ = bucket;
    std::erase_if(counts_, [bucket](const auto& kv) { return kv.second.bucket != bucket; });
  }
  Count& c = counts_[std::string(reinterpret_cast<const char*>(key.digest.data()), key.digest.size())];
  if (c.bucket != bucket) {
    c.bucket = bucket;
    c.n = 0;
  }
  v.reset = static_cast<int>(window_ - now_s % window_);
  if (c.n >= v.limit) {
    v.allowed = false;
    v.retry_after = v.reset;
    return v;
  }
  ++c.n;
  v.remaining = v.limit - c.n;
  return v;
}

}  // namespace oddsrelay::rest
