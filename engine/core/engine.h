// The single writer: applies feed records to the working state and publishes
// it as an immutable Snapshot once per batch (docs/architecture.md, step 2).
// Owned by the engine thread (see pipeline.h); tests drive it directly.
// Odds derivation (docs/feed-format.md `market`): line `ls` = at; an outcome's
// `ts` = at when its price or flags changed, else the previous ts.
// Retention (engine/core/retention.h) runs inside apply(), after each record: an
// event due at the new feed clock leaves before the next record, so the
// state after every record depends on the records alone, never on where a
// batch ends.
#pragma once

#include <atomic>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "engine/core/change_set.h"
#include "engine/core/reclaimer.h"
#include "engine/core/retention.h"
#include "engine/core/snapshot.h"
#include "protocol/feed_record.h"

namespace oddsrelay {

enum class ApplyResult : uint8_t {
  Applied,
  SkippedUnknownEvent,  // `remove` of an event the engine does not hold
};

class Engine {
 public:
  Engine() {
    work_.retain_ended_ms = kDefaultRetainEndedMs;
    store_.set_disposer([this](SnapshotPtr&& old) { reclaimer_.retire(std::move(old)); });
  }
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Applies one record to the working state. Never throws on content: a
  // record that cannot apply is skipped whole and counted.
  ApplyResult apply(feed::Record&& rec);
  // The pipeline's way in: `n` empty records at the end of the batch being
  // built, for the caller to fill in order (the queue's bulk dequeue moves
  // each record straight into its place in the batch); apply_intake()
  // then applies the first `filled` of them where they are and keeps the
  // applied ones as the batch's records; the rest are spare slots for the
  // next intake (seal drops them). A record is moved once on its way from
  // the source to the batch, not twice. The pointer is valid until the
  // next intake, apply or seal.
  feed::Record* intake(size_t n);
  void apply_intake(size_t filled);

  // Publishes everything applied since the last commit as one snapshot.
  // Returns null when nothing was applied. commit() = seal() + publish().
  BatchPtr commit();
  // Seals what was applied since the last seal into a batch (its snapshot
  // is immutable from here on) without making it current; publish() makes
  // it current. Between the two the journal appends the batch, so nothing
  // a reader can see is missing from the log (pipeline.h).
  // `apply_start_ns` is kept in the batch for the delivery metrics;
  // `catch_up` marks it taken from a backlog (Batch::catch_up).
  BatchPtr seal(int64_t apply_start_ns = 0, bool catch_up = false);
  void publish(const BatchPtr& batch) { store_.publish(batch->snapshot); }

  // The log this state belongs to; set before anything is applied.
  void set_epoch(std::string epoch) { work_.epoch = std::move(epoch); }
  // The retention horizon (--retain-ended): an ended or unlisted event
  // leaves once the feed clock is this far past its last record. Set before
  // anything is applied; every replay of a log must use the same one.
  void set_retain_ended_ms(int64_t ms) { work_.retain_ended_ms = ms; }
  int64_t retain_ended_ms() const { return work_.retain_ended_ms; }
  // Restoring a snapshot file (engine/storage/snapshot_file.h): entries go
  // straight into the working state at the given log position, then
  // publish_restored() makes that state current.
  void restore_entry(EventEntry&& entry);
  struct Position {
    uint64_t seq = 0;
    int64_t clock = 0, feed_clock = 0, last_live_at = 0;
    uint64_t evicted = 0;
  };
  void restore_position(const Position& p);
  void publish_restored();
  // A journal record that was lost to corruption: its log position passes
  // without a change, so the positions after it stay where they were.
  // Call between commits.
  void skip_position() { ++work_.seq; }
  // Takes `other`'s whole state (a fresh engine that loaded the newest
  // snapshot of the log: an edge rejoining after a hole in the stream,
  // engine/bus/bus_source.h) in place of this one's, keeping this
  // engine's retention horizon, and seals it as a batch marked `reset`
  // (publish() makes it current). `other` is left empty. Call between
  // commits, on the thread that applies.
  BatchPtr replace_state(Engine& other);

  SnapshotPtr current() const { return store_.load(); }
  const SnapshotStore& store() const { return store_; }

  // Readable from any thread.
  uint64_t applied() const { return applied_.load(std::memory_order_relaxed); }
  uint64_t skipped() const { return skipped_.load(std::memory_order_relaxed); }

 private:
  EventEntry& entry_for(uint64_t number, const std::string& id, int64_t at);
  EventChange& change_for(EventEntry& e);
  void note_market(EventEntry& e, uint32_t market);
  void count_listing(const EventEntry& e, int delta);
  void note_listing(EventChange& ch, const EventEntry& e, int32_t old_sport, bool old_live);

  // Applies a record held in records_ (or about to be dropped): the batch
  // keeps it as it is.
  ApplyResult apply_held(feed::Record& rec);
  void apply_event(feed::Record& rec);
  ApplyResult apply_remove(feed::Record& rec);
  void apply_market(feed::Record& rec);
  void apply_score(feed::Record& rec);
  void apply_stats(feed::Record& rec);
  // Retention: after a record, the entry it touched joins or leaves the
  // index (or the map, when nothing is left of it); then whatever is due
  // at the feed clock leaves.
  void track_touched();
  void evict_due();
  void drop_entry(uint64_t number, bool evicted);
  // An entry that leaves the map leaves the retention index too: its item,
  // if any, is stale from here on.
  static void unindex(const EventEntry& e) { e.retire_at = EventEntry::kNotRetiring; }
  void index(const EventEntry& e) {
    e.retire_at = e.updated_at;
    retiring_.add(e.updated_at, e.number);
  }
  void count_entry(const EventEntry& e, int delta);
  void group_markets(Batch& batch);

  Snapshot work_;      // the working version: only this thread touches it
  uint64_t edit_ = 1;  // number of the batch being built
  std::vector<EventChange> changes_;
  std::vector<std::pair<uint32_t, uint32_t>> changed_markets_;  // (change index, market id)
  // Entries erased within this batch: a later record of the batch for the
  // same event continues their EventChange rather than adding a second one.
  std::unordered_map<uint64_t, uint32_t> gone_;  // number -> EventEntry::change
  RetentionIndex retiring_;
  EventEntry* touched_ = nullptr;  // the entry the record being applied changed
  // records_[0..held_) are the batch's records (the applied ones); past
  // them, spare slots for the next intake.
  std::vector<feed::Record> records_;
  size_t held_ = 0;
  int64_t newest_at_ = 0;         // of records_ (Batch::newest_at)
  int64_t first_arrived_ns_ = 0;  // the oldest Record::arrived_ns of records_ (Batch::arrived_us); 0 = none
  // Frees replaced versions off this thread; declared before store_, so it
  // outlives the store (whose own destructor frees what it still holds).
  Reclaimer reclaimer_;
  SnapshotStore store_;
  std::atomic<uint64_t> applied_{0}, skipped_{0};
};

}  // namespace oddsrelay
