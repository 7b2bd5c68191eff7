// Everything one market of one event recorded, as one append-only byte log
// (docs/architecture.md "Odds history"): an entry per `market` record (or
// removal) holding its seq and `at` (a line's `ls` for the book at a
// moment, engine/history/book_at.h), its layout (lines in upstream order,
// each line's outcomes, empty rungs included; interned, since nearly every
// record repeats the one before) and the points it made: each outcome whose
// price, flags or line `s` changed, or that left the market.
//
// Points of one record share its seq and `at`, so a point costs its
// outcome's number and its price delta, 2-3 bytes; and the history thread
// writes a record's points to one place, the log's tail, rather than to a
// series per outcome. A reader decodes the log, following one outcome or
// all of them.
//
// An entry:
//   varint seq - seq before
//   varint zigzag(at - at before)
//   varint (layout + 1) << 1 | has points   (layout -1: the market removed)
//   if has points, per point, then a 0:
//     varint (number + 1) << 2 | kNull (1) | kQuote (2)
//     unless null:  varint zigzag(price - the outcome's last priced price)
//     if kQuote:    varint flags << 8 | s  (only when they differ from its last priced point's)
// The front can be cut (the memory bound drops the oldest entries first):
// the base is the state the first stored entry is a delta to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "engine/core/market.h"
#include "engine/history/byte_log.h"
#include "engine/history/history_bytes.h"
#include "engine/history/layout_table.h"
#include "engine/history/point.h"
#include "protocol/feed_record.h"

namespace oddsrelay::history {

// One outcome as a decoder of the log follows it.
struct OutcomeState {
  int64_t ts = 0;  // of its last point
  uint64_t seq = 0;
  int32_t price = 0;  // of its last priced point, as flags and s
  uint32_t flags = 0;
  uint8_t s = 0;
  bool priced = false;    // its last point
  int64_t change_ts = 0;  // ts of the last priced point that changed price or flags, or came back: the engine's `ts`
  int64_t priced_ts = 0;  // ts and seq of its last priced point (seq 0: none)
  uint64_t priced_seq = 0;

  Point last_priced() const { return Point{priced_ts, priced_seq, price, flags, s, priced_seq != 0}; }
  void advance(const Point& p);
};

// What the writer keeps of an outcome to encode its next point: its last
// priced quote, and whether its last point was priced.
struct QuoteTail {
  int32_t price = 0;
  uint32_t flags = 0;
  uint8_t s = 0;
  bool priced = false;
};

class MarketLog {
 public:
  struct Mark {
    uint64_t seq = 0;
    int64_t at = 0;
    int32_t layout = -1;  // index into layout(); -1: the market was removed
  };

  // `layouts`: the store's table (null: a log of removals alone, in tests).
  explicit MarketLog(uint32_t market, LayoutTable* layouts = nullptr) : market_(market), table_(layouts) {}

  // Writer: an entry for a `market` record (`rec` null or without lines:
  // removed). Returns its layout's index.
  int32_t begin(uint64_t seq, int64_t at, const feed::MarketRec* rec) {
    const int32_t layout = layout_of(rec);
    begin(seq, at, layout);
    return layout;
  }
  // The same in two steps, for a writer that knows the record repeats the
  // layout of the entry before (engine/history/event_history.h checks that
  // against its own state, cheaper than the table's bytes): the index of
  // rec's layout (interned if new), then the entry.
  int32_t layout_of(const feed::MarketRec* rec) { return rec && !rec->lines.empty() ? intern(*rec) : -1; }
  void begin(uint64_t seq, int64_t at, int32_t layout);
  // Writer: a point of the entry begun last, for outcome `number`, whose
  // last quote is `tail` (moved past it). The point's ts and seq are the
  // entry's.
  void put(uint32_t number, QuoteTail& tail, bool priced, int32_t price, uint32_t flags, uint8_t s) {
    put(number, tail.price, tail.flags, tail.s, priced, price, flags, s);
    if (priced) tail = QuoteTail{price, flags, s, true};
    tail.priced = priced;
  }
  // The same for a writer that keeps the tail its own way: the outcome's
  // last priced price, flags and s. Inline: it is the history thread's
  // per-point work.
  void put(uint32_t number, int32_t last_price, uint32_t last_flags, uint8_t last_s, bool priced, int32_t price,
           uint32_t flags, uint8_t s);
  // Writer: after the entry's points.
  void end() {
    if (open_points_) bytes_.push_back(0);
    open_points_ = false;
  }
  // A new outcome number (its state in the base starts empty).
  uint32_t add_outcome() { return outcomes_++; }
  // Writer, on an empty log: the market as a node that joined the log late
  // found it (engine/history/history_store.h, seed). The state is the base,
  // as a cut leaves it, not points: the node did not see them made. Returns
  // the layout's index; then seed_outcome gives each outcome its quote.
  int32_t seed(uint64_t seq, int64_t at, const feed::MarketRec& rec);
  void seed_outcome(uint32_t number, const OutcomeState& st);

  // Calls fn(const Mark&) per entry and fn_point(number, const Point&) per
  // point, oldest first; stops after the entry with seq `upto`'s last entry
  // at or before it. `states` (one per number) starts as the base and ends
  // as the state after the last entry decoded.
  template <class OnMark, class OnPoint>
  void decode(uint64_t upto, std::vector<OutcomeState>& states, Mark& mark, OnMark&& on_mark, OnPoint&& on_point) const;

  // Every point of outcome `number`, oldest first.
  std::vector<Point> points_of(uint32_t number) const;
  // The outcome after the record at `seq`, and the market's mark then (none:
  // no entry at or before it).
  std::optional<Mark> at_or_before(uint64_t seq, std::vector<OutcomeState>* states = nullptr) const;
  // The outcome's state after the newest entry.
  OutcomeState state_of(uint32_t number) const;
  // Drops the entries before the last one before `seq` (the state at `seq`
  // comes from that one); `remaining` gets each outcome's points left.
  // Returns the bytes freed and adds the points dropped to `dropped`.
  int64_t cut_before(uint64_t seq, std::vector<uint32_t>& remaining, uint64_t& dropped);
  // After a cut: the outcomes `gone` (sorted) have no point left and none
  // to come (their numbers are not given again), so their base states go.
  // Returns the bytes freed.
  int64_t forget(const std::vector<uint32_t>& gone);

  uint32_t market() const { return market_; }
  MarketLayout layout(int32_t i) const;  // decoded from its bytes (a reader's)
  uint32_t layout_id(int32_t i) const { return layouts_[static_cast<size_t>(i)]; }  // in the store's table
  bool removed() const { return tail_.layout < 0; }
  // Whether cut_before(seq) would drop an entry; whether one ever did.
  bool has_entries_before(uint64_t seq) const;
  bool was_cut() const { return was_cut_; }
  int32_t last_layout() const { return tail_.layout; }
  size_t outcomes() const { return outcomes_; }
  size_t bytes() const;
  size_t log_bytes() const { return bytes_.size(); }  // the entries alone: points, seqs, times, layout numbers
  // Where the next entry's bytes go (a prefetch's address, EventHistory::fetch_market).
  const uint8_t* tail_bytes() const { return bytes_.data() + bytes_.size(); }
  void add_bytes(HistoryBytes& b) const;

 private:
  // The index of rec's layout in layouts_, added if new: the store's table
  // names it, and layouts_ is searched for that id. (A writer that checked
  // the layout before on its own state calls this only when it changed.)
  int32_t intern(const feed::MarketRec& rec);
  // Grown by a quarter rather than doubled: the bytes held are what the
  // memory bound counts, and a doubled vector is a third empty on average.
  void grow() { bytes_.reserve(bytes_.size() + bytes_.size() / 4 + 64); }

  uint32_t market_;
  LayoutTable* table_;
  std::vector<uint32_t> layouts_;  // the table's id of each layout the market has had
  ByteLog bytes_;
  Mark base_, tail_;
  // Per outcome number, before the first stored entry, sorted by number;
  // a number not here starts empty. Empty until a cut, since most markets
  // are never cut; after one, only the outcomes still held (a cut that
  // drops an outcome whole forgets it): every number a market ever had
  // would cost a state each, more than a cut frees.
  std::vector<std::pair<uint32_t, OutcomeState>> base_states_;
  uint32_t outcomes_ = 0;
  size_t header_at_ = 0;  // where the open entry's layout varint starts
  bool open_points_ = false;
  bool was_cut_ = false;
};

}  // namespace oddsrelay::history

// The decoder, in the header so that its callbacks inline.
#include "engine/history/varint.h"

namespace oddsrelay::history {

template <class OnMark, class OnPoint>
void MarketLog::decode(uint64_t upto, std::vector<OutcomeState>& states, Mark& mark, OnMark&& on_mark,
                       OnPoint&& on_point) const {
  states.assign(outcomes_, OutcomeState{});
  for (const auto& [n, st] : base_states_) states[n] = st;
  mark = base_;
  const uint8_t* p = bytes_.data();
  const uint8_t* end = p + bytes_.size();
  while (p < end) {
    const uint64_t seq = mark.seq + get_varint(p);
    if (seq > upto) break;
    mark.seq = seq;
    mark.at += unzigzag(get_varint(p));
    const uint64_t h = get_varint(p);
    mark.layout = static_cast<int32_t>(h >> 1) - 1;
    on_mark(mark);
    if (!(h & 1)) continue;
    for (uint64_t c; (c = get_varint(p)) != 0;) {
      const uint32_t n = static_cast<uint32_t>(c >> 2) - 1;
      OutcomeState& st = states[n];
      Point pt{mark.at, mark.seq, 0, 0, 0, false};
      if (!(c & 1)) {
        pt.priced = true;
        pt.price = static_cast<int32_t>(st.price + unzigzag(get_varint(p)));
        pt.flags = st.flags;
        pt.s = st.s;
        if (c & 2) {
          const uint64_t q = get_varint(p);
          pt.flags = static_cast<uint32_t>(q >> 8);
          pt.s = static_cast<uint8_t>(q & 0xff);
        }
      }
      st.advance(pt);
      on_point(n, pt);
    }
  }
}

inline void MarketLog::put(uint32_t number, int32_t last_price, uint32_t last_flags, uint8_t last_s, bool priced,
                           int32_t price, uint32_t flags, uint8_t s) {
  constexpr uint64_t kNull = 1, kQuote = 2;
  if (!open_points_) {
    bytes_[header_at_] |= 1;  // bit 0 of the varint's value is bit 0 of its first byte
    open_points_ = true;
  }
  if (bytes_.room() < ByteLog::kSmall + 1) grow();
  const bool quote = priced && (flags != last_flags || s != last_s);
  // At most 17 bytes: a 32-bit number, price difference and flags, and s.
  uint8_t* p =
      put_varint(bytes_.tail(), (static_cast<uint64_t>(number + 1) << 2) | (priced ? 0 : kNull) | (quote ? kQuote : 0));
  if (priced) {
    p = put_varint(p, zigzag(static_cast<int64_t>(price) - last_price));
    if (quote) p = put_varint(p, (static_cast<uint64_t>(flags) << 8) | s);
  }
  bytes_.grew_to(p);
}

}  // namespace oddsrelay::history
