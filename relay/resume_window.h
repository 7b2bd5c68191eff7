// The relay's memory of what it recently sent, so a client that reconnects
// with `resume=<epoch>:<seq>` gets the groups it missed instead of a full
// snapshot. One group per fan-out turn: the frames live fan-out queued
// (references to the same shared frames, no copies) with what each needs
// to pass a stream's filter, the INFO that closed them, and the live events
// the turn changed (for /ws). Bounded by bytes and by age; the oldest
// groups go first. Loop thread only.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "relay/shared_frame.h"

namespace oddsrelay::relay {

// One frame of a group as fan-out sends it.
struct GroupFrame {
  FrameRef frame;
  uint64_t channel;  // conflation channel: the event number for odds, 0 otherwise
  int32_t sport;
  bool odds;                      // odds channel (needs 'odds'), else event list (needs 'live')
  std::vector<uint32_t> markets;  // odds: the market ids it names, sorted (empty in connect snapshots)
  uint8_t events = 0;         // event list: the classes of events it was encoded for (kLiveEvents | kPrematchEvents)
  std::vector<Part> parts{};  // its entries (events or markets), for filters that cut it (stream_filter.h)
};

// A live event a group changed (/ws): its number, and its id for the null
// that marks it once it has left the lists.
struct LiveChange {
  uint64_t number;
  std::string key;
};

struct Group {
  uint64_t from = 0, seq = 0;              // records from..seq
  int64_t at = 0;                          // newest record time in them
  int64_t applied_us = 0, encoded_us = 0;  // the server's stamps on them (frame_encoder.h Stamps)
  FrameRef marker;                         // the INFO live fan-out sent: {"seq","from","at"}
  std::vector<GroupFrame> frames;
  std::vector<LiveChange> live;
  size_t bytes = 0;      // what holding it costs (set by ResumeWindow::add)
  uint64_t kept_at = 0;  // loop ms when it was added
};

class ResumeWindow {
 public:
  enum class Verdict { Resumed, Malformed, OtherEpoch, TooOld, Ahead };
  // The "reason" a refused resume reports (docs/api.md, Streams).
  static const char* reason(Verdict v);

  struct Lookup {
    Verdict verdict;
    size_t first = 0;  // Resumed: the first group to send (== size(): nothing)
  };

  ResumeWindow(size_t max_bytes, uint64_t max_age_ms) : max_bytes_(max_bytes), max_age_ms_(max_age_ms) {}

  // Appends a turn's group, then evicts past either bound. A group that
  // does not follow the last one (from != seq + 1) starts the window over:
  // nothing before a gap can be resumed across it.
  void add(Group g, uint64_t now_ms);
  // Forgets every group (the state was replaced: none of them leads to it).
  void clear() {
    groups_.clear();
    bytes_ = 0;
  }
  // Drops groups older than the age bound (the loop's periodic tick).
  void evict(uint64_t now_ms);

  // Can a client whose state is `seq` of log `epoch` be brought to
  // `cur_seq` of `cur_epoch` from what is held?
  Lookup find(std::string_view epoch, uint64_t seq, std::string_view cur_epoch, uint64_t cur_seq) const;

  // The live events changed by groups first.. (last change of each number
  // wins), sorted by number.
  std::vector<std::pair<uint64_t, std::string_view>> live_changes(size_t first) const;

  size_t size() const { return groups_.size(); }
  bool empty() const { return groups_.empty(); }
  const Group& operator[](size_t i) const { return groups_[i]; }
  const Group& front() const { return groups_.front(); }
  size_t bytes() const { return bytes_; }

 private:
  void pop_front();
  size_t max_bytes_;
  uint64_t max_age_ms_;
  std::deque<Group> groups_;
  size_t bytes_ = 0;
};

}  // namespace oddsrelay::relay
