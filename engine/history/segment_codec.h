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
// Deltas start again at each segment (`new_segment`), and so do the ids and
// layouts written in full, so a segment needs no other segment's bytes but
// for the quotes of the events it shares with older ones, which are
// deleted only once those events left (the retention horizon).
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
  // A segment starts: deltas from zero, ids and layouts written again.
  void new_segment() {
    ++gen_;
    last_seq_ = 0;
    last_at_ = 0;
  }
  size_t events() const { return events_.size(); }

 private:
  struct Market {
    std::vector<std::string> layouts;              // each layout's bytes
    std::vector<uint32_t> layout_gen;              // the segment that last wrote it in full
    std::vector<std::vector<uint32_t>> positions;  // per layout: each outcome's name
    std::unordered_map<std::string, uint32_t> layout_of;
    std::unordered_map<std::string, uint32_t> name_of;  // line key + '\0' + outcome id
    std::vector<QuoteTail> quotes;                      // per name; `priced`: known (written once)
  };
  struct Event {
    std::string id;
    uint32_t id_gen = 0;
    std::unordered_map<uint32_t, Market> markets;
  };

  void put_market(Market& m, const feed::MarketRec& rec, std::vector<uint8_t>& out);
  void get_market(Market& m, const uint8_t*& p, feed::MarketRec& rec);
  uint32_t intern(Market& m, std::string bytes);

  std::unordered_map<uint64_t, Event> events_;
  uint32_t gen_ = 1;
  uint64_t last_seq_ = 0;
  int64_t last_at_ = 0;
  std::string scratch_;
};

}  // namespace oddsrelay::history
