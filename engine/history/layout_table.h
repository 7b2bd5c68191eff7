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
  // Distinct line keys a table takes: an outcome keeps its line's id in
  // 21 bits (engine/history/event_history.h).
  static constexpr uint32_t kMaxLines = uint32_t{1} << 21;

  // `hash_mask` is ANDed into every layout's hash: tests give 0 so that all
  // layouts collide, and show that same() still tells them apart.
  // `max_lines` (at most kMaxLines) bounds the line keys; tests give a few
  // thousand to reach it without two million keys.
  explicit LayoutTable(uint64_t hash_mask = ~uint64_t{0}, uint32_t max_lines = kMaxLines)
      : hash_mask_(hash_mask), max_lines_(max_lines < kMaxLines ? max_lines : kMaxLines) {}

  // The id of rec's layout (rec has lines), added if new. Found by a hash
  // of a few of the record's words, then checked with same(): the layout's
  // bytes are made only when it is new to the table (a market's ladder
  // moving is 20% of the records, and nearly all their layouts are here).
  // Throws std::length_error when rec names a line key past max_lines;
  // the table is then half-written and only fit to be dropped (the store
  // clears it).
  uint32_t intern(const feed::MarketRec& rec);
  // Whether rec's layout is layout `id`: a walk of its bytes against the
  // record, no copy, no hash.
  bool same(uint32_t id, const feed::MarketRec& rec) const;
  MarketLayout layout(uint32_t id) const;  // decoded from its bytes (a reader's)
  // The ids of layout `id`'s lines, in its order (empty rungs included):
  // a writer that found the layout needs no line key's hash.
  void line_ids(uint32_t id, std::vector<uint32_t>& out) const;
  // Every line key the history's outcomes name, once for the store, as
  // the layouts are: an outcome keeps this id (engine/history/event_history.h),
  // not the 16-byte key, and a market no list of its own (a few hundred
  // keys for a day of 2,000 events, where each market's own list held
  // 211,414 of them a million records in).
  uint32_t line_id(const LineKey& key);  // added if new; throws as intern() does
  const LineKey& line(uint32_t id) const { return lines_[id]; }
  size_t size() const { return next_.size(); }
  uint32_t max_lines() const { return max_lines_; }
  size_t bytes() const;

 private:
  // Of a record's layout, from its lines' keys (as LineKey cuts them; one
  // per line) and the record: its first and last keys, its first and last
  // outcome ids and its sizes, masked; same() says the rest.
  uint64_t hash(const feed::MarketRec& rec, const LineKey* keys) const;
  uint32_t find(const feed::MarketRec& rec, const LineKey* keys, uint64_t hash) const;
  bool same(uint32_t id, const feed::MarketRec& rec, const LineKey* keys) const;

  uint64_t hash_mask_;
  uint32_t max_lines_;
  // Per layout, per line: its line id, outcome count and outcome ids, a
  // word each (the key once, in lines_: its compare is two words; and a
  // word an id compares without a varint's decode, the check every layout
  // change of a market makes); one layout after another, at_[id] to
  // at_[id + 1]. (Some thousands of layouts: the words cost little.)
  std::vector<uint32_t> words_;
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
