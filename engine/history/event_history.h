// The history of one event: one series of points per outcome it ever had
// (market, line, outcome), so that an answer for the event reads these and
// nothing else (the index of engine/history/history_store.h is one map
// entry an event). Point making lives here: a `market` record is a full
// replacement, so comparing it with each outcome's last quote says which
// outcomes moved, which are new and which left the market.
//
// The compare is the history thread's per-record work, and the writer's
// state is most of what an outcome costs, so both are one array per
// market: each outcome is 16 bytes by its number (name as ids, last
// quote), and the current layout is the numbers in the record's own order.
// A record that repeats the layout (four in five do) is checked and zipped
// against that array, no search and no hash, and only a changed outcome
// touches its series.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/core/market.h"
#include "engine/history/market_log.h"
#include "engine/history/pins.h"
#include "protocol/feed_record.h"

namespace oddsrelay::history {

struct OutcomeKey {
  uint32_t market = 0;
  LineKey line;
  uint32_t outcome = 0;
};
bool operator<(const OutcomeKey& a, const OutcomeKey& b);

// An outcome the event holds, as a reader sees it: its key, and its number
// in its market's log (engine/history/market_log.h), under which its points
// are; its open and close (docs/api.md "Odds history") are read from them
// (EventHistory::open_of, close_of), and kept apart only once the memory
// bound cuts them. A value: the writer keeps an outcome as 16 bytes in its
// market's array by number (EventHistory::Out), and a reader's list is
// made from those when asked.
struct OutcomeHistory {
  OutcomeKey key;
  uint32_t number = 0;
};

// The outcomes of an event, sorted by key, made for one reader (it owns
// them: keep the list while using its elements).
class OutcomeList {
 public:
  using Vec = std::vector<OutcomeHistory>;
  explicit OutcomeList(Vec v) : v_(std::move(v)) {}
  Vec::const_iterator begin() const { return v_.begin(); }
  Vec::const_iterator end() const { return v_.end(); }
  size_t size() const { return v_.size(); }
  bool empty() const { return v_.empty(); }
  const OutcomeHistory& operator[](size_t i) const { return v_[i]; }
  // By key (a binary search; null: not held), for a reader that looks up
  // many (book_at): EventHistory::find walks the market's array instead.
  const OutcomeHistory* find(const OutcomeKey& k) const;

 private:
  Vec v_;
};

class EventHistory {
 public:
  // `layouts`: the store's (engine/history/layout_table.h), which outlives it.
  explicit EventHistory(std::string key, LayoutTable* layouts = nullptr) : key_(std::move(key)), layouts_(layouts) {}

  // A `market` record at `at`, log position `seq`. Returns the bytes the
  // event's history grew by.
  int64_t on_market(const feed::MarketRec& rec, int64_t at, uint64_t seq);
  // A `remove`: every priced outcome leaves the book (a null point each);
  // the history itself stays until the retention horizon.
  int64_t on_remove(int64_t at, uint64_t seq);
  // An `event` record: its display id, and the first one listing it live
  // fixes every outcome's close.
  void on_event(std::string_view key, bool live, uint64_t seq);

  // A node that joined the log late (or restarted from its data dir)
  // starts from the engine's state at `seq`: each market's quotes as its
  // log's base (no points: it did not see them made), so that the records
  // after `seq` make exactly the points they made where the whole log was
  // seen. `open` and `close` stay empty: they are points this node holds.
  // Returns the bytes the event's history grew by.
  int64_t seed_market(const Market& m, uint64_t seq);
  // The event's listing then; already live, its close is not known here.
  void seed_listing(bool listed, bool live, uint64_t seq);

  // The history thread's lookahead (HistoryStore::apply_locked): what a
  // `market` record of this event will read, fetched into the cache a few
  // records before it is applied, one level a step, each step reading only
  // what the one before fetched: the markets' heads (market_index's search),
  // then the market's slots and its log's tail, then its outcomes. Only
  // prefetches: nothing changes.
  void fetch_heads() const;
  void fetch_market(uint32_t market) const;
  void fetch_outcomes(uint32_t market) const;

  // Drops points with seq < `seq`; returns the bytes freed.
  int64_t cut_before(uint64_t seq);
  // The ts of its oldest held point, or INT64_MAX.
  int64_t oldest_ts() const;

  const std::string& key() const { return key_; }
  uint64_t live_seq() const { return live_seq_; }  // 0: not live yet
  // Every outcome held, sorted by key (made from the markets' arrays: an
  // answer's cost, not the writer's).
  OutcomeList outcomes() const;
  std::optional<OutcomeHistory> find(const OutcomeKey& k) const;
  // An outcome's points, oldest first, and its state after the newest
  // (its last priced point: the close while not live).
  std::vector<Point> points_of(const OutcomeHistory& o, OutcomeState* last = nullptr) const;
  // Every outcome of a market at once, by number (one pass over its log,
  // for an answer about many of its outcomes), and each one's state after
  // the newest.
  void points_by_number(uint32_t market, std::vector<std::vector<Point>>& points,
                        std::vector<OutcomeState>& last) const;
  const MarketLog* log_of(uint32_t market) const;
  // The outcome's first priced point, and (once the event is live) its last
  // priced point before the event went live; `points`: every point of it
  // held (points_of). Null (not priced) when it has none.
  Point open_of(const OutcomeHistory& o, const std::vector<Point>& points) const;
  Point close_of(const OutcomeHistory& o, const std::vector<Point>& points) const;
  Point open_of(const OutcomeHistory& o) const { return open_of(o, points_of(o)); }
  Point close_of(const OutcomeHistory& o) const { return close_of(o, points_of(o)); }
  const std::vector<MarketLog>& markets() const { return logs_; }  // sorted by market
  // Whether an `event` record had listed it (and no `remove` since) after
  // the record at `seq`; and the seq of its first record.
  bool listed_at(uint64_t seq) const;
  uint64_t first_seq() const { return first_seq_; }
  // Nothing left that an answer at or after now could show: no outcome, no
  // market (not even empty rungs), not listed. The memory bound drops such
  // an event whole.
  bool idle() const;
  size_t bytes() const { return bytes_; }
  uint64_t points() const { return points_; }
  void add_bytes(HistoryBytes& b) const;

  // What one outcome costs besides its points' bytes: its place in its
  // market's array by number and, while in the book, in the current
  // layout's numbers. (Its state in its log's base after a cut is counted
  // in the log's bytes.)
  static constexpr size_t kOutcomeBytes = 16 + sizeof(uint32_t);

 private:
  // An outcome of a market, by its number there: its name (line and id)
  // and its last quote, so that the compare and the point's bytes need
  // nothing else. 16 bytes: the writer's whole state of an outcome.
  struct Out {
    int32_t price = 0;  // its last priced quote
    uint32_t flags = 0;
    uint32_t id = 0;
    uint32_t line : 21 = 0;    // its line key's id in the store's LayoutTable
    uint32_t priced : 1 = 0;   // its last point was priced
    uint32_t in_book : 1 = 0;  // in the market's current layout
    uint32_t gone : 1 = 0;     // dropped by a cut (its number is not reused)
    // With price and flags. A byte of its own after the 24 bits, not a
    // bit-field: the compare and the store of every point read and write
    // it without a mask (the mask was 2% of the history thread's work).
    uint8_t s = 0;
  };
  static_assert(sizeof(Out) == 16 && kOutcomeBytes == sizeof(Out) + sizeof(uint32_t));
  static_assert(offsetof(Out, s) == 15, "s shares the bit-fields' word");
  static_assert(LayoutTable::kMaxLines <= (uint32_t{1} << 21), "every line id fits Out::line's 21 bits");
  const LineKey& line(uint32_t id) const { return layouts_->line(id); }
  // Grown by a quarter, not doubled, as the logs are: these bytes are
  // counted, and most markets stop growing early.
  template <class V, class T>
  static void append(V& v, const T& x) {
    if (v.size() == v.capacity()) v.reserve(v.size() + v.size() / 4 + 4);
    v.push_back(x);
  }

  struct MarketSlots {
    int32_t layout = -1;  // the MarketLog layout `cur` follows; -1: none (removed, or never)
    // Bit (line id % 32) set for the line of every outcome made: a line
    // whose bit is clear is new to the market, known without a search of
    // `outs` (where the padding after `layout` was: no byte more).
    uint32_t lines_seen = 0;
    // The current layout, as the record that repeats it reads: per line,
    // its index in `lines` and its outcome count, then those outcomes'
    // numbers. A record is checked and zipped against it in one walk.
    std::vector<uint32_t> cur;
    std::vector<Out> outs;  // by number
    // Per layout the market has had: where its outcomes' numbers start in
    // `numbers` (-1: not resolved yet), so that a record going back to a
    // layout finds its outcomes without a search.
    std::vector<int32_t> layout_at;
    std::vector<uint32_t> numbers;
    // The opens and closes a cut of the market's log dropped the points of
    // (engine/history/pins.h; empty until then: nearly every market).
    Pins pins;

    static uint32_t line_bit(uint32_t line) { return uint32_t{1} << (line % 32); }
    size_t bytes() const {
      return cur.capacity() * sizeof(uint32_t) + outs.capacity() * sizeof(Out) +
             layout_at.capacity() * sizeof(int32_t) + numbers.capacity() * sizeof(uint32_t) + pins.bytes();
    }
  };
  const MarketSlots* slots_of(uint32_t market) const;
  // Before a cut of market i's log at `seq`: the opens and closes whose
  // points it drops, kept apart. Returns the bytes added.
  int64_t pin(size_t i, uint64_t seq);

  // A point of outcome `n`: its bytes, and its tail moved past it.
  void put(MarketLog& log, Out& o, uint32_t n, bool priced, int32_t price, uint32_t flags, uint8_t s) {
    log.put(n, o.price, o.flags, static_cast<uint8_t>(o.s), priced, price, flags, s);
    if (priced) {
      o.price = price;
      o.flags = flags;
      o.s = s;
    }
    o.priced = priced;
    ++points_;
  }
  // Whether rec repeats the layout `cur` holds; then its points.
  bool repeats(const MarketSlots& ms, const feed::MarketRec& rec) const;
  void zip(MarketSlots& ms, MarketLog& log, const feed::MarketRec& rec);
  size_t market_index(uint32_t market);
  size_t heads_bytes() const { return logs_.capacity() * sizeof(MarketLog) + slots_.capacity() * sizeof(MarketSlots); }
  // A record whose layout differs from `cur`'s: find or make each
  // outcome's number, withdraw the ones it no longer has, a new `cur`.
  void relayout(MarketSlots& ms, const feed::MarketRec& rec, int32_t layout);
  // Every outcome of `cur` out of the book (a null point each; the entry begun).
  void withdraw_all(MarketSlots& ms, MarketLog& log);
  // The numbers of rec's outcomes, in its order (outcomes new to the
  // market made here); `lines`: its layout's line ids (lines_of).
  const uint32_t* numbers_of(MarketSlots& ms, MarketLog& log, const feed::MarketRec& rec, int32_t layout,
                             const uint32_t* lines);
  // The line ids of the log's layout, in its order (valid until the next call).
  const uint32_t* lines_of(const MarketLog& log, int32_t layout) const;
  // The header in `cur` (line id, count, numbers) of `line`, looked for from
  // `from` (moved past it when found), then from the start; null: not a
  // line of the current layout.
  static const uint32_t* line_in_cur(const MarketSlots& ms, uint32_t line, size_t& from);
  void seen(uint64_t seq) {
    if (first_seq_ == 0) first_seq_ = seq;
  }

  std::string key_;
  LayoutTable* layouts_;
  uint64_t live_seq_ = 0;
  size_t outcomes_ = 0;                             // held (not gone), in every market
  std::vector<MarketLog> logs_;                     // sorted by market
  std::vector<MarketSlots> slots_;                  // per logs_ entry
  std::vector<std::pair<uint64_t, bool>> listing_;  // (seq, listed) at each change of the listing
  uint64_t first_seq_ = 0;
  size_t bytes_ = sizeof(EventHistory);
  uint64_t points_ = 0;
};

}  // namespace oddsrelay::history
