#include "rest/list_cache.h"

#include "rest/gzip.h"

namespace oddsrelay::rest {

// sport (positive int32, 0 = all) | limit (at most 10000, 0 = none) | list:
// distinct parameters, distinct keys.
uint64_t ListCache::key(bool live, std::optional<int32_t> sport, std::optional<uint32_t> limit) {
  return (static_cast<uint64_t>(sport.value_or(0)) << 32) | (static_cast<uint64_t>(limit.value_or(0)) << 1) |
         (live ? 1 : 0);
}

ListCache::Answer* ListCache::find(const Snapshot& s, bool live, std::optional<int32_t> sport,
                                   std::optional<uint32_t> limit) {
  auto it = entries_.find(key(live, sport, limit));
  if (it == entries_.end() || it->second.seq != s.seq || it->second.epoch != s.epoch) {
    misses_.add();
    return nullptr;
  }
  hits_.add();
  return &it->second.answer;
}

ListCache::Answer& ListCache::put(const Snapshot& s, bool live, std::optional<int32_t> sport,
                                  std::optional<uint32_t> limit, std::string body) {
  const uint64_t k = key(live, sport, limit);
  if (entries_.size() >= kMaxEntries && !entries_.count(k)) entries_.clear();
  Entry& e = entries_[k];
  e.epoch = s.epoch;
  e.seq = s.seq;
  e.answer = Answer{net::make_shared_bytes(std::move(body)), nullptr, false};
  return e.answer;
}

const net::SharedBytes& ListCache::gzip(Answer& a) {
  if (!a.gz_ready) {
    std::string z;
    if (gzip_compress(*a.body, z)) a.gz = net::make_shared_bytes(std::move(z));
    a.gz_ready = true;
    gzips_.add();
  }
  return a.gz;
}

}  // namespace oddsrelay::rest
