// Every market layout the odds history holds, once for the whole store
// (docs/architecture.md "Odds history"): a layout is a market's lines in
// upstream order and each line's outcome ids, and markets of one type
// share them across events (the same ladder of lines, the same outcome
// ids), so a MarketLog keeps only the ids of the layouts it has had and
// the bytes live here. Written by the history thread under the store's
// exclusive lock, read under its shared lock, like the rest of the store;
// a layout stays until the store is cleared (there are few: some thousands
// for a day of 2,000 events).
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
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

class LayoutTable {
 public:
  // The id of rec's layout (rec has lines), added if new.
  uint32_t intern(const feed::MarketRec& rec);
  // Whether rec's layout is layout `id`: a walk of its bytes against the
  // record, no copy, no hash (nearly every record repeats its market's
  // layout, so this is the per-record check).
  bool same(uint32_t id, const feed::MarketRec& rec) const;
  MarketLayout layout(uint32_t id) const;  // decoded from its bytes (a reader's)
  // Every line key the history's outcomes name, once for the store, as
  // the layouts are: an outcome keeps this id (engine/history/event_history.h),
  // not the 16-byte key, and a market no list of its own (a few hundred
  // keys for a day of 2,000 events, where each market's own list held
  // 211,414 of them a million records in).
  uint32_t line_id(const LineKey& key);  // added if new
  const LineKey& line(uint32_t id) const { return lines_[id]; }
  size_t size() const { return next_.size(); }
  size_t bytes() const;

 private:
  // Per layout, per line: key length, key, outcome count, outcome ids as
  // varints; one layout after another, at_[id] to at_[id + 1].
  std::vector<uint8_t> bytes_;
  std::vector<uint32_t> at_;
  std::unordered_map<uint64_t, uint32_t> by_hash_;  // the newest layout of a hash
  std::vector<uint32_t> next_;                      // per layout, the one before of its hash (UINT32_MAX: none)
  struct LineHash {
    size_t operator()(const LineKey& k) const;
  };
  std::vector<LineKey> lines_;
  std::unordered_map<LineKey, uint32_t, LineHash> line_ids_;
};

}  // namespace oddsrelay::history
