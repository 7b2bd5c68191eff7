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
  }
  size_t events() const { return events_.size(); }

 private:
  struct Market {
    std::vector<std::string> layouts;              // each layout's bytes
    std::vector<std::vector<uint32_t>> positions;  // per layout: each outcome's name
    std::unordered_map<std::string, uint32_t> layout_of;
    std::unordered_map<std::string, uint32_t> name_of;  // line key + '\0' + outcome id
    std::vector<QuoteTail> quotes;                      // per name; `priced`: known (written once)
  };
  struct Event {
    std::string id;
    std::unordered_map<uint32_t, Market> markets;
  };

  void put_market(Market& m, const feed::MarketRec& rec, std::vector<uint8_t>& out);
  void get_market(Market& m, const uint8_t*& p, feed::MarketRec& rec);
  uint32_t intern(Market& m, std::string bytes);

  std::unordered_map<uint64_t, Event> events_;
  uint64_t last_seq_ = 0;
  int64_t last_at_ = 0;
  std::string scratch_;
};

}  // namespace oddsrelay::history
