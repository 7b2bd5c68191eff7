// Per-key request counting in fixed windows aligned to the clock (so that
// "retry_after = seconds until the current minute bucket resets"). Owned by
// the REST loop thread; counts survive a keys reload (keyed by key digest).
// Counts of past windows are dropped when a window starts, so the map holds
// at most the keys seen in the current window (a key removed on reload
// leaves with its window).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "rest/api_keys.h"

namespace oddsrelay::rest {

class RateLimiter {
 public:
  explicit RateLimiter(int window_s = 60) : window_(window_s) {}

  struct Verdict {
    bool allowed = true;
    uint32_t limit = 0;      // requests per window; 0: the key is not limited
    uint32_t remaining = 0;  // requests left in this window after this one
    int reset = 0;           // seconds until this window ends (1..window)
    int retry_after = 0;     // when refused: seconds until the window resets
  };
  // Counts one request of `key` at unix time `now_s`. Sandbox keys and keys
  // without a rate_limit are never limited.
  Verdict check(const ApiKey& key, int64_t now_s);
  int window() const { return window_; }
  size_t tracked() const { return counts_.size(); }

 private:
  struct Count {
    int64_t bucket = -1;
    uint32_t n = 0;
  };
  int window_;
  int64_t swept_ = -1;  // the window whose start last emptied the map of older ones
  std::unordered_map<std::string, Count> counts_;
};

}  // namespace oddsrelay::rest
