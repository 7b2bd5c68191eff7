// A per-key connection limit across every loop: one count per API key (or
// any other 64-bit id: rest/conn_limits.h counts client addresses too) of
// the connections it holds open, behind a mutex. The relay's stream limit
// (ws_connections: taken when a relay loop accepts a stream, given back
// when the stream closes) and the REST listener's (http_connections) each
// keep one. Both are rare next to frames and requests, so the lock is never
// on a hot path, and the count is exact however many loops there are.
#pragma once

#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace oddsrelay::api {

class KeySlots {
 public:
  // Takes a slot of `key` if it holds fewer than `limit`.
  bool take(uint64_t key, uint32_t limit) {
    std::lock_guard lock(mu_);
    auto it = held_.find(key);
    const uint32_t n = it == held_.end() ? 0 : it->second;
    if (n >= limit) return false;
    if (it == held_.end())
      held_.emplace(key, 1);
    else
      ++it->second;
    return true;
  }
  void give_back(uint64_t key) {
    std::lock_guard lock(mu_);
    auto it = held_.find(key);
    if (it != held_.end() && --it->second == 0) held_.erase(it);
  }
  uint32_t held(uint64_t key) const {
    std::lock_guard lock(mu_);
    auto it = held_.find(key);
    return it == held_.end() ? 0 : it->second;
  }

 private:
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, uint32_t> held_;
};

}  // namespace oddsrelay::api
