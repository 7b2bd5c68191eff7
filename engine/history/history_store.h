// Every event's odds history, in memory: the index (event number -> its
// EventHistory), the memory bound, and the log position the histories are
// consistent with. One writer (the history recorder's thread,
// engine/history/history_recorder.h) applies published batches; REST
// threads read one event at a time under a shared lock, so an answer is
// read from that event's points only and never sees half a batch.
#pragma once

#include <climits>
#include <cstdint>
#include <functional>
#include <shared_mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/core/change_set.h"
#include "engine/history/clock_index.h"
#include "engine/history/event_history.h"
#include "engine/history/segment_codec.h"

namespace oddsrelay::history {

inline constexpr size_t kDefaultHistoryBytes = size_t{256} << 20;

// What an answer states besides the event's points.
struct HeldState {
  std::string epoch;
  uint64_t seq = 0;            // every point held has a seq <= this
  int64_t clock = 0;           // the newest `at` applied (feed time)
  int64_t held_from = 0;       // points from this ts on are all held; 0: nothing was dropped
  uint64_t held_from_seq = 0;  // and from this seq on (the book at a moment too); 0: from the log's start
  uint64_t events = 0, points = 0, bytes = 0;
};

class HistoryStore {
 public:
  // `max_line_keys`: LayoutTable's bound (tests lower it to reach it).
  explicit HistoryStore(size_t max_bytes = kDefaultHistoryBytes, uint32_t max_line_keys = LayoutTable::kMaxLines)
      : max_bytes_(max_bytes), layouts_(~uint64_t{0}, max_line_keys) {}

  // Writer only, before the first batch: the engine's state the records
  // will follow, when it is not the log's start (an edge that joined from a
  // snapshot, a node that recovered its data dir). Its quotes become each
  // market's base and held_from_seq its seq + 1: the points of the records
  // after it are then exactly those of a node that saw the whole log.
  void seed(const Snapshot& snap);
  // Writer only: nothing held (a history that could not be rebuilt).
  void clear();
  // Past the bound on distinct line keys since the history began (the
  // table's max_lines, at most LayoutTable::kMaxLines: an id of 21 bits in
  // an outcome's 16 bytes), a record naming a new one cannot be taken. The
  // history thread must not die of a feed: the store starts again, seeded
  // with the state the batch left, as a reset does (held_from_seq says
  // so). A batch read back from the files has no state: the store is then
  // left empty and overflowed() until seed() or clear(), which the restart
  // does (history_recovery.h).
  bool overflowed() const { return overflowed_; }
  uint64_t overflows() const { return overflows_; }
  // Writer only: the batch's records in log order, then the events that
  // left at the retention horizon. A `reset` batch (the state replaced)
  // starts the history again, seeded with the new state.
  void apply(const Batch& batch);
  // Likewise, without the records before `from` (a recovery replaying the
  // journal past what the history's files held).
  void apply_from(const Batch& batch, uint64_t from);
  // Writer only: a batch as the history's files logged it
  // (engine/history/segment_codec.h), applied as the original was.
  void apply(const LoggedBatch& batch, const std::string& epoch);
  // The events whose history a batch ends: they left at the retention
  // horizon and no later record of the batch brought them back.
  static std::vector<uint64_t> evicted(const Batch& batch);

  // Any thread: fn(const EventHistory* or null, const HeldState&) under the
  // shared lock; keep it short (it holds the writer off).
  void read(uint64_t number, const std::function<void(const EventHistory*, const HeldState&)>& fn) const;
  HeldState state() const;
  // Any thread: fn(histories of `numbers`, each or null, state) under one
  // shared lock, for an answer about several events at once.
  void read_many(const std::vector<uint64_t>& numbers,
                 const std::function<void(const std::vector<const EventHistory*>&, const HeldState&)>& fn) const;
  // The log position of the book at feed time `at`: the record before the
  // first one whose `at` passed it (for a feed in time order, the last
  // record with `at` <= it); 0 before the first record held.
  uint64_t seq_at(int64_t at) const;  // call inside read/read_many (under the lock)
  // Any thread: where the bytes are (perf/history/bench_history).
  HistoryBytes breakdown() const;

 private:
  EventHistory& entry(uint64_t number, const std::string& id);
  // Runs fn; false when it overflowed the line keys, the store then empty.
  template <class F>
  bool guarded(F&& fn);
  void apply_locked(uint64_t first_seq, std::span<const feed::Record> records, const std::vector<uint64_t>& evicted,
                    uint64_t seq, const std::string& epoch);
  void apply_record(const feed::Record& r, uint64_t seq);
  // The history of a `market` record's event, if held, looked up some
  // records before the record is applied (apply_locked): the records'
  // lookups do not depend on each other, so made together their cache
  // misses overlap (EventHistory::fetch_heads says what follows).
  const EventHistory* ahead(const feed::Record& r) const;
  void seed_locked(const Snapshot& snap);
  void clear_locked();
  void enforce_bound();

  const size_t max_bytes_;
  mutable std::shared_mutex mu_;
  std::unordered_map<uint64_t, EventHistory> events_;
  HeldState held_;
  uint64_t cut_seq_ = 0;     // points before this seq were dropped for the bound
  uint64_t seeded_seq_ = 0;  // the records before this seq were never seen here (seed)
  uint64_t first_seq_ = 0;
  bool overflowed_ = false;  // writer only
  uint64_t overflows_ = 0;
  ClockIndex clock_;                        // seq_at's index
  LayoutTable layouts_;                     // every market's layouts, once (engine/history/layout_table.h)
  std::vector<const EventHistory*> ahead_;  // apply_locked's, per record of the batch
};

}  // namespace oddsrelay::history
