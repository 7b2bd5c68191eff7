// The relay's memory of what it recently sent, so a client that reconnects
// with `resume=<epoch>:<seq>` gets the batches it missed instead of a full
// snapshot. One LoopBatch (encoded_batch.h) per fan-out: the frames live
// fan-out queued (references to the same shared frames, no copies) with
// what each needs to pass a stream's filter, the INFO that closed them,
// and the live events they changed (for /ws). Bounded by age and by the
// heap it really keeps alive (cost(): frames, their bytes' capacity and
// size classes, vectors, the deque's nodes), so the configured bytes are
// what the process's memory grows by; the oldest batches go first. Loop
// thread only.
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

#include "relay/encoded_batch.h"

namespace oddsrelay::relay {

class ResumeWindow {
 public:
  enum class Verdict { Resumed, Malformed, OtherEpoch, TooOld, Ahead };
  // The "reason" a refused resume reports (docs/api.md, Streams).
  static const char* reason(Verdict v);

  struct Lookup {
    Verdict verdict;
    size_t first = 0;  // Resumed: the first batch to send (== size(): nothing)
  };

  // `loops`: how many relay loops keep a window each. Every loop takes
  // every batch, so a window counts the heap of all of them: its own part
  // once per loop, the hub's bytes they share once. max_bytes then bounds
  // the windows together, and bytes() is their total.
  ResumeWindow(size_t max_bytes, uint64_t max_age_ms, unsigned loops = 1)
      : max_bytes_(max_bytes), max_age_ms_(max_age_ms), loops_(loops ? loops : 1) {}

  // Appends a batch, then evicts past either bound. A batch that does not
  // follow the last one (from != seq + 1) starts the window over: nothing
  // before a gap can be resumed across it.
  void add(LoopBatch b, uint64_t now_ms);
  // Forgets every batch (the state was replaced: none of them leads to it).
  void clear() {
    held_.clear();
    bytes_ = 0;
  }
  // Drops batches older than the age bound (the loop's periodic tick).
  void evict(uint64_t now_ms);
  // Counts batches first.. again, then evicts past the byte bound: a
  // catch-up may have given their frames another framing (SSE, deflate)
  // since they were added.
  void recount(size_t first);
  // What holding `b` costs the heap, as counted against max_bytes.
  size_t cost(const LoopBatch& b) const;

  // Can a client whose state is `seq` of log `epoch` be brought to
  // `cur_seq` of `cur_epoch` from what is held?
  Lookup find(std::string_view epoch, uint64_t seq, std::string_view cur_epoch, uint64_t cur_seq) const;

  // The live events changed by batches first.. (last change of each number
  // wins), sorted by number.
  std::vector<std::pair<uint64_t, std::string_view>> live_changes(size_t first) const;

  size_t size() const { return held_.size(); }
  bool empty() const { return held_.empty(); }
  const LoopBatch& operator[](size_t i) const { return held_[i].batch; }
  const LoopBatch& front() const { return held_.front().batch; }
  size_t bytes() const { return bytes_; }

 private:
  struct Held {
    LoopBatch batch;
    size_t bytes;      // what holding it costs
    uint64_t kept_at;  // loop ms when it was added
  };
  void pop_front();
  void evict_bytes();
  size_t max_bytes_;
  uint64_t max_age_ms_;
  unsigned loops_;
  std::deque<Held> held_;
  size_t bytes_ = 0;
};

}  // namespace oddsrelay::relay
