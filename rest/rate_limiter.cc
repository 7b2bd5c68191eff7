#include "rest/rate_limiter.h"

namespace oddsrelay::rest {

RateLimiter::Verdict RateLimiter::check(const ApiKey& key, int64_t now_s) {
  Verdict v;
  if (key.sandbox || !key.rate_limit) return v;
  v.limit = *key.rate_limit;
  int64_t bucket = now_s / window_;
  // Windows only move forward: the first request of a window empties the
  // shards of older ones, once.
  if (int64_t seen = swept_.load(std::memory_order_relaxed);
      bucket > seen && swept_.compare_exchange_strong(seen, bucket, std::memory_order_relaxed)) {
    for (Shard& old : shards_) {
      std::lock_guard<std::mutex> lock(old.mu);
      std::erase_if(old.counts, [bucket](const auto& kv) { return kv.second.bucket != bucket; });
    }
  }
  Shard& s = shards_[key.digest[0] % kShards];  // a SHA-256 byte: evenly spread
  std::lock_guard<std::mutex> lock(s.mu);
  Count& c = s.counts[std::string(reinterpret_cast<const char*>(key.digest.data()), key.digest.size())];
  if (c.bucket > bucket) {
    // Another loop read the clock a moment later and opened the next window
    // for this key: this request counts there, never resetting it.
    bucket = c.bucket;
    now_s = bucket * window_;
  }
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

size_t RateLimiter::tracked() const {
  size_t n = 0;
  for (const Shard& s : shards_) {
    std::lock_guard<std::mutex> lock(s.mu);
    n += s.counts.size();
  }
  return n;
}

}  // namespace oddsrelay::rest
