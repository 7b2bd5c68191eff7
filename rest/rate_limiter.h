// Per-key request counting in fixed windows aligned to the clock (the
// interface's "retry_after = seconds until the current minute bucket
// resets"). Shared by every REST loop (--http-threads) and exact across
// them: keys are spread over kShards shards by digest, each a mutex and its
// map, so one key's count is only ever changed under its shard's lock and
// two keys rarely contend. Counts survive a keys reload (keyed by key
// digest). The first request of a window drops every shard's counts of past
// windows, so the shards hold at most the keys seen in the current window
// (a key removed on reload leaves with its window).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "protocol/api/api_keys.h"
#include "rest/vocabulary.h"

namespace oddsrelay::rest {

class RateLimiter {
 public:
  static constexpr size_t kShards = 16;

  explicit RateLimiter(int window_s = 60) : window_(window_s) {}

  struct Verdict {
    bool allowed = true;
    uint32_t limit = 0;      // requests per window; 0: the key is not limited
    uint32_t remaining = 0;  // requests left in this window after this one
    int reset = 0;           // seconds until this window ends (1..window)
    int retry_after = 0;     // when refused: seconds until the window resets
  };
  // Counts one request of `key` at unix time `now_s`; any thread. Sandbox
  // keys and keys without a rate_limit are never limited.
  Verdict check(const ApiKey& key, int64_t now_s);
  int window() const { return window_; }
  size_t tracked() const;

 private:
  struct Count {
    int64_t bucket = -1;
    uint32_t n = 0;
  };
  struct Shard {
    mutable std::mutex mu;
    std::unordered_map<std::string, Count> counts;
  };
  int window_;
  std::atomic<int64_t> swept_{-1};  // the window whose start last emptied the shards of older ones
  std::array<Shard, kShards> shards_;
};

}  // namespace oddsrelay::rest
