// The served odds of one market of one event: lines and their outcomes, with
// the fields the engine derives (line `ls`, outcome `ts`). Immutable once
// published: a `market` record builds a new Market and the snapshot shares
// it until the next record for that market replaces it.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "protocol/feed_record.h"
#include "protocol/line_key.h"

namespace oddsrelay {

struct Outcome {
  uint32_t id = 0;
  int32_t price = 0;       // decimal odds x 100
  uint32_t flags = 0;      // 0 open, non-zero locked
  int32_t prev_price = 0;  // the price before the last price change (= price until one happens)
  int64_t ts = 0;          // unix ms of the last price or flags change
};
static_assert(sizeof(Outcome) == 24);

// A line key stored inline: keys are short ("s", "s-2.75", "s10:2").
class LineKey {
 public:
  LineKey() = default;
  explicit LineKey(std::string_view k) {
    len_ = static_cast<uint8_t>(k.size() < kMaxLineKey ? k.size() : kMaxLineKey);
    std::memcpy(buf_, k.data(), len_);
  }
  std::string_view view() const { return {buf_, len_}; }
  // `special` of the odds: the text after `s`, empty (null) for the bare key.
  std::string_view special() const { return view().substr(1); }
  // The bytes past the key are always zero (the buffer starts zeroed and
  // only a key is copied in), so two keys are equal when all 16 bytes,
  // length included, are: two word compares, no memcmp call per line.
  bool operator==(const LineKey& o) const {
    uint64_t a[2], b[2];
    std::memcpy(a, this, sizeof a);
    std::memcpy(b, &o, sizeof b);
    return ((a[0] ^ b[0]) | (a[1] ^ b[1])) == 0;
  }

 private:
  uint8_t len_ = 0;
  char buf_[kMaxLineKey] = {};
};
static_assert(sizeof(LineKey) == 16 && std::is_trivially_copyable_v<LineKey>, "LineKey compares as two words");

struct Line {
  LineKey key;
  uint8_t suspended = 0;  // s: 0 open, 1 suspended
  uint32_t first = 0;     // index of its first outcome in Market::outcomes
  uint32_t count = 0;     // 0 = empty rung (serves only `ls`)
  int64_t ls = 0;         // unix ms this line was last seen upstream
};

// The market, its lines and its outcomes live in one allocation together
// with the shared_ptr control block: one allocation a market record.
struct Market {
  uint32_t id = 0;
  std::span<const Line> lines;        // in upstream order
  std::span<const Outcome> outcomes;  // all lines' outcomes, flat
  // The sum of its outcomes' terms in the client-visible digest
  // (odds_digest.h), under the event that holds it: set where the served
  // odds are built (build_market, a snapshot file's reader), so that a
  // stream's digest never hashes an outcome. 0 in markets that are not
  // served (line history, the odds at full time).
  uint64_t digest = 0;

  // A market with room for `nlines` lines and `noutcomes` outcomes, which
  // the builder fills through the returned pointers before publishing:
  // every field of each, as they start out uninitialised.
  static std::shared_ptr<Market> make(uint32_t id, size_t nlines, size_t noutcomes, Line** lines, Outcome** outcomes);
};

using MarketPtr = std::shared_ptr<const Market>;

// One market of an event's list. The id is kept beside the pointer so that
// finding a market does not touch (and miss the cache on) every market it
// passes; `->` reaches the market itself.
struct MarketRef {
  uint32_t id = 0;
  MarketPtr ptr;
  const Market* operator->() const { return ptr.get(); }
  const Market& operator*() const { return *ptr; }
};
// The markets of one event, sorted by market id.
using MarketList = std::vector<MarketRef>;
const Market* find_market(const MarketList& markets, uint32_t market_id);

// The served market of a `market` record with lines, at `at`: every line's
// `ls` is `at`; an outcome whose price and flags `prev` (the market it
// replaces, null for a new one) already had keeps that outcome's `ts`, and
// `prev_price` follows the last price change. `event`: the number of the
// event it belongs to, for its digest.
MarketPtr build_market(const feed::MarketRec& rec, const Market* prev, int64_t at, uint64_t event);

}  // namespace oddsrelay
