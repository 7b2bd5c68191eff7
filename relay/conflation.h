// /pt-ws conflate_ms=N (docs/api.md): a bucket of streams that asked for
// the latest state at most every N ms holds the changes of the groups
// between two flushes here, per channel and entry, the newest entry
// winning: one evt:<sport> frame per sport with each changed event's last
// object (or its null), one odds:<sport>:<event> frame per event with each
// changed market's last state (or its null), then one INFO covering every
// record merged. The merged frames are encoded once per bucket at the
// flush, from the bytes of the entries (GroupFrame::parts), for all of the
// bucket's streams. Loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "relay/resume_window.h"

namespace oddsrelay::relay {

class Conflation {
 public:
  bool empty() const { return seq_ == 0; }
  // A group's frames as the bucket admitted (and cut) them.
  void add(const Group& g, std::span<const GroupFrame> frames);

  struct Flush {
    std::vector<GroupFrame> frames;  // event lists first, then odds
    uint64_t from = 0, seq = 0;
    int64_t at = 0, applied_us = 0, encoded_us = 0;
  };
  // The merged frames and what they cover; empties the pending state. The
  // odds of events that are no longer live (`live` false) are left out:
  // their event list entry, sent first, tells the client to drop them.
  Flush take(const std::function<bool(uint64_t)>& live);

 private:
  struct Channel {
    std::string prefix;  // "P\x1F<channel>\x1F"
    int32_t sport = 0;
    uint8_t classes = 0;
    std::map<uint64_t, std::string> entries;  // id -> "<key>":<value>, newest
  };
  static void merge(Channel& ch, const GroupFrame& f);
  static GroupFrame encode(const Channel& ch, uint64_t channel, bool odds);

  uint64_t from_ = 0, seq_ = 0;
  int64_t at_ = 0, applied_us_ = 0, encoded_us_ = 0;
  std::map<int32_t, Channel> evt_;    // by sport
  std::map<uint64_t, Channel> odds_;  // by event number
};

}  // namespace oddsrelay::relay
