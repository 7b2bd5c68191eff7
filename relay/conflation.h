// /pt-ws conflate_ms=N (docs/api.md): a bucket of streams that asked for
// the latest state at most every N ms holds the changes of the batches
// between two flushes here, per channel and entry, the newest entry
// winning: one evt:<sport> frame per sport with each changed event's last
// object (or its null), one odds:<sport>:<event> frame per event with each
// changed market's last state (or its null), then one INFO covering every
// record merged. The merged frames are encoded once per bucket at the
// flush, from the bytes of the entries (BatchFrame::parts), for all of the
// bucket's streams. Loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "relay/encoded_batch.h"

namespace oddsrelay::relay {

class Conflation {
 public:
  bool empty() const { return seq_ == 0; }
  // A batch's frames as the bucket admitted (and cut) them.
  void add(const LoopBatch& batch, std::span<const LoopBatchFrame> frames);

  // The merged frames (event lists first, then odds) and what they cover,
  // as one batch without its INFO; empties the pending state. The odds of
  // events that are no longer live (`live` false) are left out: their
  // event list entry, sent first, tells the client to drop them.
  LoopBatch take(const std::function<bool(uint64_t)>& live);

 private:
  struct Channel {
    std::string prefix;  // "P\x1F<channel>\x1F"
    int32_t sport = 0;
    uint8_t classes = 0;
    std::map<uint64_t, std::string> entries;  // id -> "<key>":<value>, newest
  };
  static void merge(Channel& ch, const LoopBatchFrame& f);
  static LoopBatchFrame encode(const Channel& ch, uint64_t channel, bool odds);

  uint64_t from_ = 0, seq_ = 0;
  int64_t at_ = 0;
  Stamps stamps_;
  std::map<int32_t, Channel> evt_;    // by sport
  std::map<uint64_t, Channel> odds_;  // by event number
};

}  // namespace oddsrelay::relay
