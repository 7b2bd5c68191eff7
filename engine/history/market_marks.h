// The records of one market of one event, for the book at a moment
// (GET /v1/odds?at=, engine/history/book_at.h): each record's seq and `at`
// (a line's `ls`), and the market's layout after it (its lines in upstream
// order, each line's outcomes in order, empty rungs included) or its
// removal. The outcomes' prices are in their point series; layouts are
// interned, since nearly every record of a market repeats the one before,
// so a record costs its two deltas and a layout number: 3-6 bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "engine/core/market.h"
#include "protocol/feed_record.h"

namespace oddsrelay::history {

struct LineLayout {
  LineKey key;
  std::vector<uint32_t> outcomes;
  bool operator==(const LineLayout& o) const { return key == o.key && outcomes == o.outcomes; }
};
using MarketLayout = std::vector<LineLayout>;

class MarketMarks {
 public:
  struct Mark {
    uint64_t seq = 0;
    int64_t at = 0;
    int32_t layout = -1;  // index into layouts(); -1: the market was removed
  };

  explicit MarketMarks(uint32_t market) : market_(market) {}
  // A `market` record; `removed` for `"lines":{}` or the event's `remove`.
  // Returns the bytes it grew by.
  int64_t add(uint64_t seq, int64_t at, const feed::MarketRec* rec);
  // The last mark at or before `seq`, if any.
  std::optional<Mark> at_or_before(uint64_t seq) const;
  // Drops the marks before the last one before `seq` (the state at `seq`
  // still needs that one); returns the bytes freed.
  int64_t cut_before(uint64_t seq);

  uint32_t market() const { return market_; }
  const MarketLayout& layout(int32_t i) const { return layouts_[static_cast<size_t>(i)]; }
  bool removed() const { return tail_.layout < 0; }
  int32_t last_layout() const { return tail_.layout; }  // of the newest mark
  size_t bytes() const;

 private:
  static Mark decode(const uint8_t*& p, Mark& st);
  // The index of rec's layout, interned if new. A record is compared in
  // place with the layout before it, else found by hash: no layout is built
  // for one that repeats.
  int32_t intern(const feed::MarketRec& rec);

  uint32_t market_;
  std::vector<MarketLayout> layouts_;
  std::vector<uint64_t> hashes_;  // per layout, for the lookup
  size_t layout_bytes_ = 0;       // the layouts' heap bytes, counted as they are interned
  std::vector<uint8_t> bytes_;
  Mark base_, tail_;
};

}  // namespace oddsrelay::history
