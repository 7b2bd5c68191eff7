// Retention: which events leave the state, and when, so that a relay left
// running for months holds the live set plus a horizon rather than every
// event it ever saw (docs/architecture.md "Retention"). Measured in feed
// time (the newest `at` applied), never the wall clock: every replay of a
// log evicts at the same record, so the same seq is the same state on every
// restart and every edge. Also the estimate of the bytes the state holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <utility>

#include "engine/core/event_entry.h"

namespace oddsrelay {

// The default horizon: longer than the interface's 72-hour window for
// corrected results, so a correction within it still finds its event.
inline constexpr int64_t kDefaultRetainEndedMs = 96LL * 3600 * 1000;

// An event may leave once it ended (its first final score) or is not listed
// (removed, or odds and scores whose event record never came).
inline bool retirable(const EventEntry& e) { return !e.listed() || (e.score && e.score->ended); }

// Estimated heap bytes of the parts of an entry (the allocation, its
// control block and the slot that points at it). A part shared by two
// versions is counted once, in the working state; odds frozen at the end
// are counted on their own although they share markets with the live odds
// until those change (an overestimate while an ended event stays listed).
inline constexpr size_t kEntryBytes = sizeof(EventEntry) + 16 + 32;  // + control block + trie slot
size_t info_bytes(const feed::EventObject* info);
size_t market_bytes(const Market& m);  // with its MarketRef
size_t score_bytes(const ScoreState* s);
size_t stats_bytes(const StatsState* s);
size_t history_bytes(const LineHistory* h);  // withdrawn lines (engine/core/line_history.h)
size_t history_header_bytes();               // a history with no lines
size_t entry_bytes(const EventEntry& e);

// The events that may leave, ordered by the `at` under which each was
// indexed (then by number, so ties leave in one order everywhere). Writer
// only. Lazy, so that a record costs nothing here: an indexed event that
// gets a newer record keeps its old position (EventEntry::retire_at), and
// one that stops being retirable leaves a stale item behind. The engine
// skips a stale item when it comes due and puts an event whose last record
// is newer back under that `at`. Every indexed position is at or before
// the event's last record, so the first live item due is the event with
// the oldest last record: events leave in exactly the order (and at the
// record) an eager index would let them.
class RetentionIndex {
 public:
  void add(int64_t at, uint64_t number) { set_.emplace(at, number); }
  // The next item due at feed clock `clock` with horizon `horizon` (indexed
  // at or before clock - horizon), taken out of the index; maybe stale.
  bool take_due(int64_t clock, int64_t horizon, int64_t& at, uint64_t& number) {
    if (set_.empty() || set_.begin()->first > clock - horizon) return false;
    at = set_.begin()->first;
    number = set_.begin()->second;
    set_.erase(set_.begin());
    return true;
  }
  size_t size() const { return set_.size(); }

 private:
  std::set<std::pair<int64_t, uint64_t>> set_;
};

}  // namespace oddsrelay
