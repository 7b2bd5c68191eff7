// Whole answers of GET /v1/live and GET /v1/prematch, per parameter set
// (list, sport, limit) and per engine state: an entry is valid for the
// snapshot (epoch, seq) it was built from, and every published state has a
// seq of its own (each batch applies at least one record), so an answer
// changes exactly when the state does. Between two batches every poller of
// the same list gets the same bytes, built once, gzip-encoded at most once.
// Owned by one REST loop; bounded (cleared whole past kMaxEntries). The
// bytes are shared and immutable (protocol/net/out_queue.h): a connection
// queues a reference, and an entry replaced by a newer state stays alive
// for the connections still sending it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "engine/core/snapshot.h"
#include "protocol/net/out_queue.h"
#include "rest/tally.h"

namespace oddsrelay::rest {

class ListCache {
 public:
  static constexpr size_t kMaxEntries = 4096;

  struct Answer {
    net::SharedBytes body;
    net::SharedBytes gz;    // valid when gz_ready
    bool gz_ready = false;  // gzip was tried (gz null: it failed)
  };
  // The answer cached for these parameters at this state, or null.
  Answer* find(const Snapshot& s, bool live, std::optional<int32_t> sport, std::optional<uint32_t> limit);
  // Stores `body` as that answer, replacing an older state's.
  Answer& put(const Snapshot& s, bool live, std::optional<int32_t> sport, std::optional<uint32_t> limit,
              std::string body);
  // The gzip form of `a`, compressed on first use; null on a zlib failure.
  const net::SharedBytes& gzip(Answer& a);

  uint64_t hits() const { return hits_.get(); }  // any thread
  uint64_t misses() const { return misses_.get(); }
  uint64_t gzips() const { return gzips_.get(); }
  size_t size() const { return entries_.size(); }  // the owning loop only

 private:
  struct Entry {
    std::string epoch;
    uint64_t seq = 0;
    Answer answer;
  };
  static uint64_t key(bool live, std::optional<int32_t> sport, std::optional<uint32_t> limit);
  std::unordered_map<uint64_t, Entry> entries_;
  Tally hits_, misses_, gzips_;
};

}  // namespace oddsrelay::rest
