// The byte form of the history segments (engine/storage/history_segments.h):
// each batch the history thread applied, as the records the history reads
// from it, in about the bytes the in-memory market logs spend. A `market`
// record is written as its difference from the market's record before: its
// layout's number (the layout itself the first time a segment names it) and
// the outcomes whose quote (price, flags, line `s`) changed, by position,
// as the points the history makes of it. Decoding rebuilds the record the
// history needs (ids, lines, outcomes, quotes; an `event` only its id and
// `live`) and the store applies it as it applied the original, so a store
// rebuilt from the segments answers what the one that wrote them did.
//
// A batch:
//   varint zigzag(first_seq - the batch before's last seq - 1)
//   varint records, varint (seq - first_seq - records + 1)
//   per record:
//     varint kind | id follows << 2 | live << 3   (kind: 0 other, 1 market, 2 event, 3 remove)
//     varint zigzag(at - the record before's at)
//     unless other: varint event number; if id follows: varint length, id
//     market: varint market, varint layout << 1 | inline (then varint length, the layout's bytes),
//             per changed outcome varint (position + 1) << 1 | flags or s changed,
//             varint zigzag(price delta), if changed varint flags << 8 | s; then a 0
//   varint evicted, each varint event number
// Each segment starts from nothing (`new_segment`): deltas from zero, every
// event's id, its markets' layouts (numbered again) and its outcomes' quotes
// written in full the first time the segment names them. A segment needs no
// other segment's bytes, so the oldest can go at the retention horizon while
// the next still holds events it shared with it; the price is one full
// record per market held at each rotation.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/history/market_log.h"
#include "protocol/feed_record.h"

namespace oddsrelay::history {

// One batch as the history applied it.
struct LoggedBatch {
  uint64_t first_seq = 0, seq = 0;  // seq: the batch's last position
  std::vector<feed::Record> records;
  std::vector<uint64_t> evicted;  // the events whose history went at the horizon
};

class SegmentCodec {
 public:
  // Appends a batch to `out`.
  void put(uint64_t first_seq, uint64_t seq, std::span<const feed::Record> records,
           const std::vector<uint64_t>& evicted, std::vector<uint8_t>& out);
  // Reads the batch at `p` (bytes put wrote, checked by their frame).
  void get(const uint8_t*& p, LoggedBatch& b);
  // A segment starts: deltas from zero, ids, layouts and quotes written again.
  void new_segment() {
    events_.clear();
    last_seq_ = 0;
    last_at_ = 0;
    held_ = 0;
  }
  size_t events() const { return events_.size(); }
  // What its state holds (the writer's or the reader's), by part: the
  // layouts' bytes and heads, the names and their quotes, the indexes, and
  // the events' and markets' own.
  struct Bytes {
    size_t layouts = 0, names = 0, indexes = 0, heads = 0;
    size_t total() const { return layouts + names + indexes + heads; }
  };
  Bytes bytes() const;
  // About what the state grew by since the segment started (what it made:
  // events, markets, layouts, names; evictions not taken off), kept as it
  // grows: the writer starts a new file past a bound of it
  // (HistorySegments), since every layout a segment has seen stays.
  size_t held() const { return held_; }

 private:
  // Numbers of a market's layouts or names by their hash: open addressing
  // in one array, a slot holding the number + 1 (0: empty) in its low half
  // and the hash's high half above, at most half full. A lookup reads one
  // line of memory, where a node-based multimap read its bucket and then
  // each node (1.7% of a data-dir replay's samples, perf/PROFILE.md s32).
  struct HashIndex {
    std::vector<uint64_t> slots;
  };
  // A market's state in this segment, flat: its layouts' bytes one after
  // another, the names (line key, outcome id) of its outcomes and each
  // name's last quote. A layout or a name is found by a scan of hashes
  // while the market has few (most have a handful), past a few dozen
  // (segment_codec.cc) by a hash index, so a market that keeps moving its
  // lines costs a lookup, not a scan. (Maps of strings per market held
  // 27 KB an event: more than the history itself, and a cache miss at
  // every step.)
  struct Market {
    struct Layout {
      uint64_t hash = 0;  // of its bytes
      uint32_t at = 0;    // its bytes: bytes[at, at + len)
      uint32_t len = 0;
      uint32_t names = 0;  // its outcomes' names: names[names, names + count)
      uint32_t count = 0;
    };
    struct Name {
      uint64_t hash = 0;    // of its line key, seeded with its outcome id
      uint32_t key_at = 0;  // its line key: bytes[key_at, key_at + key_len)
      uint32_t key_len = 0;
      uint32_t id = 0;
    };
    // The layout its last record had (-1: none yet in this segment): four
    // records in five repeat it, and are matched without writing its bytes.
    // First, with the arrays a record reads after it, so that they share
    // the struct's first bytes, the two lines put fetches ahead.
    int32_t last = -1;
    std::string bytes;
    std::vector<Layout> layouts;
    std::vector<uint32_t> names;    // per layout, per outcome: its name's number
    std::vector<QuoteTail> quotes;  // per name; `priced`: known (written once)
    std::vector<Name> name_keys;    // per name
    // Hash to number, empty while the market has a few dozen or fewer.
    HashIndex layout_index, name_index;

    std::string_view layout_bytes(uint32_t i) const { return {bytes.data() + layouts[i].at, layouts[i].len}; }
  };
  struct Event {
    std::string id;
    std::unordered_map<uint32_t, Market> markets;
  };

  // A record's event and market state (null: a kind without one), found
  // some records ahead of its bytes (put): the lookups of a batch's records
  // do not depend on each other, so made together their cache misses
  // overlap, where one after another each record waited on its own chain
  // of them (map, market, layout, names, quotes: most of the writer's time
  // on a capture's 50 MB of state, perf/PROFILE.md s29).
  struct Target {
    Event* event = nullptr;
    Market* market = nullptr;
  };
  Target target(const feed::Record& r);
  // The next steps of that chain for a record put writes soon, one level a
  // step, each from the level the step before fetched.
  static void fetch_layout(const Target& t);
  static void fetch_names(const Target& t);
  static void fetch_quotes(const Target& t);
  void put_record(const feed::Record& r, const Target& t, std::vector<uint8_t>& out);
  void put_market(Market& m, const feed::MarketRec& rec, std::vector<uint8_t>& out);
  void get_market(Market& m, const uint8_t*& p, feed::MarketRec& rec);
  // The number of the layout with these bytes (and their hash), or -1.
  static int64_t find_layout(const Market& m, std::string_view bytes, uint64_t hash);
  // Numbers a layout `m` does not have yet, and the names of its outcomes.
  uint32_t add_layout(Market& m, std::string_view bytes, uint64_t hash);
  uint32_t name_of(Market& m, uint32_t key_at, uint32_t key_len, uint32_t id);
  Event& event(uint64_t number);
  Market& market(Event& e, uint32_t id);

  std::unordered_map<uint64_t, Event> events_;
  uint64_t last_seq_ = 0;
  int64_t last_at_ = 0;
  std::string scratch_;
  std::vector<Target> targets_;  // put's, per record of the batch
  size_t held_ = 0;
};

}  // namespace oddsrelay::history
