// The points of one outcome, as bytes: each point is the delta to the one
// before it, as varints (engine/history/varint.h), so a typical point (a few
// seconds and a few hundred records later, a few ticks away, same flags)
// takes 4-6 bytes against the 32 of a decoded Point (docs/architecture.md
// "Odds history"). Appended by the history recorder's thread only; read
// under the store's lock (engine/history/history_store.h).
//
// A point's bytes:
//   varint zigzag(ts - ts before)
//   varint (seq - seq before) << 2 | kNull (1) | kQuote (2)
//   unless null:  varint zigzag(price - last priced price)
//   if kQuote:    varint flags << 8 | s  (only when they differ from the last priced point's)
// The front can be cut (the memory bound drops the oldest points first):
// `base_` is the state the first stored point is a delta to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/history/point.h"

namespace oddsrelay::history {

class PointSeries {
 public:
  void append(const Point& p);
  // Calls fn(const Point&) for every point, oldest first.
  template <class Fn>
  void for_each(Fn&& fn) const {
    State st = base_;
    const uint8_t* p = bytes_.data();
    const uint8_t* end = p + bytes_.size();
    while (p < end) fn(decode(p, st));
  }
  // Drops the points with seq < `seq`; returns how many.
  uint32_t cut_before(uint64_t seq);

  // The outcome as the book held it after the record at `seq` (for
  // GET /v1/odds?at=): priced or not, its quote, and `ts` as the engine
  // serves it (the last change of price or flags, or its return to the
  // book). Exact for any seq at or after the last cut.
  struct Quote {
    bool priced = false;
    int32_t price = 0;
    uint32_t flags = 0;
    uint8_t s = 0;
    int64_t ts = 0;
  };
  Quote quote_at(uint64_t seq) const;

  uint32_t count() const { return count_; }
  size_t bytes() const { return bytes_.capacity(); }
  // The newest point (priced = false before any): the tail state is the
  // last priced point's, moved to the null point's ts and seq after one.
  Point last() const { return Point{tail_.ts, tail_.seq, tail_.price, tail_.flags, tail_.s, tail_.priced}; }

 private:
  struct State {
    int64_t ts = 0;
    uint64_t seq = 0;
    int32_t price = 0;  // of the last priced point, as flags and s
    uint32_t flags = 0;
    uint8_t s = 0;
    bool priced = false;    // the last point
    int64_t change_ts = 0;  // ts of the last priced point that changed price or flags, or came back
  };
  static Point decode(const uint8_t*& p, State& st);
  static void advance(State& st, const Point& p);

  std::vector<uint8_t> bytes_;
  State base_, tail_;  // before the first stored point, after the last
  uint32_t count_ = 0;
};

}  // namespace oddsrelay::history
