// The opens and closes of a market's outcomes that the memory bound cut
// the points of (docs/api.md "Odds history": `open` is an outcome's first
// priced point, `close` its last one before the event went live). Both are
// read from the outcome's points (EventHistory::open_of, close_of) while
// the log holds them; a cut that drops one keeps it here first, as varints
// (some 12 bytes a point rather than a Point's 32), so that only a cut
// market pays for them and the answers stay what they were.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/history/point.h"

namespace oddsrelay::history {

class Pins {
 public:
  // Whether outcome `number` has a pinned open (into *open) or close (into
  // *close), whichever is asked (the other pointer null).
  bool get(uint32_t number, Point* open, Point* close) const;
  // Pins a priced point, replacing what was pinned for it before.
  void set_open(uint32_t number, const Point& p) { set(number, 0, p); }
  void set_close(uint32_t number, const Point& p) { set(number, 1, p); }
  size_t bytes() const { return bytes_.capacity(); }

 private:
  // Entries sorted by (number, which): varint number << 1 | which, then the
  // point: zigzag ts, seq, zigzag price, flags << 8 | s.
  void set(uint32_t number, uint32_t which, const Point& p);
  std::vector<uint8_t> bytes_;
};

}  // namespace oddsrelay::history
