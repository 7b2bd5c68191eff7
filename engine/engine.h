// The single writer: applies feed records to the working state and publishes
// it as an immutable Snapshot once per batch (DESIGN.md data path, step 2).
// Owned by the engine thread (see pipeline.h); tests drive it directly.
// Odds derivation (FEED-FORMAT.md `market`): line `ls` = at; an outcome's
// `ts` = at when its price or flags changed, else the previous ts.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "engine/change_set.h"
#include "engine/snapshot.h"
#include "protocol/feed_record.h"

namespace oddsrelay {

enum class ApplyResult : uint8_t {
  Applied,
  SkippedUnknownEvent,  // `remove` of an event the engine does not hold
};

class Engine {
 public:
  Engine() = default;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Applies one record to the working state. Never throws on content: a
  // record that cannot apply is skipped whole and counted.
  ApplyResult apply(feed::Record&& rec);

  // Publishes everything applied since the last commit as one snapshot.
  // Returns null when nothing was applied. commit() = seal() + publish().
  BatchPtr commit();
  // Seals what was applied since the last seal into a batch (its snapshot
  // is immutable from here on) without making it current; publish() makes
  // it current. Between the two the journal appends the batch, so nothing
  // a reader can see is missing from the log (pipeline.h).
  BatchPtr seal();
  void publish(const BatchPtr& batch) { store_.publish(batch->snapshot); }

  // The log this state belongs to; set before anything is applied.
  void set_epoch(std::string epoch) { work_.epoch = std::move(epoch); }
  // Restoring a snapshot file (engine/storage/snapshot_file.h): entries go
  // straight into the working state at the given log position, then
  // publish_restored() makes that state current.
  void restore_entry(EventEntry&& entry);
  void restore_position(uint64_t seq, int64_t clock, int64_t last_live_at);
  void publish_restored();
  // A journal record that was lost to corruption: its log position passes
  // without a change, so the positions after it stay where they were.
  // Call between commits.
  void skip_position() { ++work_.seq; }

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

  void apply_event(feed::Record& rec);
  ApplyResult apply_remove(feed::Record& rec);
  void apply_market(feed::Record& rec);
  void apply_score(feed::Record& rec);
  void apply_stats(feed::Record& rec);

  Snapshot work_;     // the working version: only this thread touches it
  uint64_t edit_ = 1; // number of the batch being built
  std::vector<EventChange> changes_;
  std::vector<std::pair<uint32_t, uint32_t>> changed_markets_;  // (change index, market id)
  std::vector<uint64_t> maybe_empty_;  // events to drop at commit if nothing is left of them
  std::vector<feed::Record> records_;
  SnapshotStore store_;
  std::atomic<uint64_t> applied_{0}, skipped_{0};
};

}  // namespace oddsrelay
