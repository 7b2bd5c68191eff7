// oddsload's per-channel order check: an odds frame carries each changed
// market whole, so the newest line time ("ls") on one channel never goes
// back. Hundreds of subscribers see the same few hundred channels, so the
// event number is mapped to a small index once, in a table every subscriber
// shares (small and hot), and each subscriber keeps a flat array by that
// index: a map per subscriber missed the cache twice a frame, half of the
// client's frame handling at 400 subscribers (perf/PROFILE.md s39).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace oddsrelay::load {

// Event number -> a dense index, in first-seen order.
class ChannelIndex {
 public:
  uint32_t of(uint64_t number) {
    return index_.try_emplace(number, static_cast<uint32_t>(index_.size())).first->second;
  }

 private:
  std::unordered_map<uint64_t, uint32_t> index_;
};

// One subscriber's newest "ls" per channel.
class ChannelOrder {
 public:
  // Notes a frame whose newest "ls" is `newest` (0: none) on channel `ix`;
  // true when that is older than an earlier frame's on the same channel.
  bool went_back(uint32_t ix, int64_t newest) {
    if (ix >= last_.size()) last_.resize(ix + 1, 0);
    int64_t& last = last_[ix];
    const bool back = newest && newest < last;
    if (newest > last) last = newest;
    return back;
  }

 private:
  std::vector<int64_t> last_;
};

}  // namespace oddsrelay::load
