// An edge that meets a hole in the log rejoins from a newer snapshot: the
// snapshot is loaded into a fresh engine and replaces the serving engine's
// state in one step (Engine::replace_state), delivered to the sinks in order
// with the batches around it (Pipeline::replace_state). These tests hold the
// two to that: the new state is the snapshot's exactly, records after it
// apply as on an engine that never had the old state, the published version
// is never written to afterwards, and sinks see old batches, one reset
// batch, then batches from the snapshot's seq + 1, in that order.
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <vector>

#include "engine/core/pipeline.h"
#include "engine/core/state_digest.h"
#include "engine/storage/snapshot_file.h"
#include "tests/test_util.h"

namespace oddsrelay {
namespace {

using test::same_state;
using test::sim_records;

std::vector<feed::Record> slice(const std::vector<feed::Record>& all, size_t from, size_t to) {
  return {all.begin() + static_cast<ptrdiff_t>(from), all.begin() + static_cast<ptrdiff_t>(to)};
}

// A fresh engine holding the state after `recs`, as an edge loads it from
// the bus: through the snapshot file format.
std::unique_ptr<Engine> loaded(const std::vector<feed::Record>& recs, SnapshotPtr& built) {
  Engine src;
  src.set_epoch("e0e0e0e0e0e0");
  test::apply_all(src, recs);
  built = src.current();
  std::string data;
  encode_snapshot(*built, [&](std::string& piece) {
    data += piece;
    piece.clear();
  });
  auto e = std::make_unique<Engine>();
  SnapshotInfo info;
  std::string err;
  EXPECT_TRUE(load_snapshot_data(data, "test", *e, info, err)) << err;
  return e;
}

TEST(StateReplace, EngineTakesTheSnapshotAndAppliesOnFromIt) {
  const auto all = sim_records(6000);
  SnapshotPtr at3000;
  auto fresh = loaded(slice(all, 0, 3000), at3000);
  // Many small commits after the load: the new state's nodes carry batch
  // numbers far past those of the engine that takes them.
  std::vector<feed::Record> more = slice(all, 3000, 4000);
  for (size_t i = 0; i < more.size(); i += 25) {
    for (size_t j = i; j < i + 25; ++j) fresh->apply(std::move(more[j]));
    fresh->commit();
  }
  const SnapshotPtr at4000 = fresh->current();

  Engine e;
  e.set_epoch("e0e0e0e0e0e0");
  test::apply_all(e, slice(all, 0, 1500));
  const SnapshotPtr old_state = e.current();
  const uint64_t old_digest = state_digest(*old_state);
  ASSERT_EQ(old_state->seq, 1500u);

  BatchPtr b = e.replace_state(*fresh);
  ASSERT_TRUE(b);
  EXPECT_TRUE(b->reset);
  EXPECT_EQ(b->snapshot->seq, 4000u);
  EXPECT_EQ(b->first_seq, 4001u);
  EXPECT_TRUE(b->records.empty());
  EXPECT_TRUE(b->changes.empty());
  EXPECT_TRUE(same_state(*b->snapshot, *at4000));
  EXPECT_EQ(fresh->current()->seq, 4000u);  // what it published stays; its working state went
  // Sealed, not yet current: publish() makes it so (the pipeline does, in order).
  EXPECT_EQ(e.current()->seq, 1500u);
  e.publish(b);
  EXPECT_EQ(e.current()->seq, 4000u);
  const uint64_t reset_digest = state_digest(*b->snapshot);

  // Records after the snapshot apply as on an engine that held it all along,
  // and neither published version is written to.
  // (Small commits again: the batch numbers run past every number the new
  // state's nodes carry, so a node not taken as shared would be written.)
  std::vector<feed::Record> rest = slice(all, 4000, 6000);
  for (size_t i = 0; i < rest.size(); i += 25) {
    for (size_t j = i; j < i + 25; ++j) e.apply(std::move(rest[j]));
    e.commit();
  }
  Engine whole;
  whole.set_epoch("e0e0e0e0e0e0");
  test::apply_all(whole, all);
  EXPECT_EQ(e.current()->seq, 6000u);
  EXPECT_TRUE(same_state(*e.current(), *whole.current()));
  EXPECT_EQ(state_digest(*b->snapshot), reset_digest);
  EXPECT_EQ(state_digest(*old_state), old_digest);
}

TEST(StateReplace, EngineKeepsItsRetentionHorizon) {
  const auto all = sim_records(500);
  SnapshotPtr built;
  auto fresh = loaded(all, built);
  Engine e;
  e.set_retain_ended_ms(3'600'000);
  BatchPtr b = e.replace_state(*fresh);
  EXPECT_EQ(e.retain_ended_ms(), 3'600'000);
  EXPECT_EQ(b->snapshot->retain_ended_ms, 3'600'000);
}

class Recorder : public BatchSink {
 public:
  void on_batch(const BatchPtr& b) override {
    std::lock_guard lock(mu);
    seen.push_back(b);
  }
  std::mutex mu;
  std::vector<BatchPtr> seen;
};

TEST(StateReplace, PipelineDeliversTheResetInOrder) {
  const auto all = sim_records(9000);
  SnapshotPtr at6000;
  auto fresh = loaded(slice(all, 0, 6000), at6000);

  Engine e;
  e.set_epoch("e0e0e0e0e0e0");
  e.publish_restored();
  Pipeline p(e, 64);
  Recorder sink;
  p.add_sink(&sink);
  p.start();
  for (auto& r : slice(all, 0, 2000)) p.push(std::move(r));
  // Every record pushed before is applied and delivered before the state goes.
  ASSERT_TRUE(p.replace_state(*fresh));
  EXPECT_EQ(e.current()->seq, 6000u);
  for (auto& r : slice(all, 6000, 9000)) p.push(std::move(r));
  p.stop();

  std::lock_guard lock(sink.mu);
  uint64_t next = 1;
  size_t resets = 0;
  for (const BatchPtr& b : sink.seen) {
    if (b->reset) {
      ++resets;
      EXPECT_EQ(next, 2001u) << "the reset comes after every batch pushed before it";
      EXPECT_TRUE(same_state(*b->snapshot, *at6000));
      next = b->snapshot->seq + 1;
      continue;
    }
    EXPECT_EQ(b->first_seq, next);
    next = b->snapshot->seq + 1;
  }
  EXPECT_EQ(resets, 1u);
  EXPECT_EQ(next, 9001u);
  Engine whole;
  whole.set_epoch("e0e0e0e0e0e0");
  test::apply_all(whole, all);
  EXPECT_TRUE(same_state(*e.current(), *whole.current()));
}

TEST(StateReplace, PipelineWithAJournalRefuses) {
  struct NullLog : LogStage {
    void append(const Batch&) override {}
    void tick() override {}
  } log;
  Engine e;
  e.publish_restored();
  Pipeline p(e);
  p.set_log(&log);
  p.start();
  Engine fresh;
  EXPECT_FALSE(p.replace_state(fresh));
  p.stop();
  Pipeline idle(e);
  EXPECT_FALSE(idle.replace_state(fresh)) << "not running";
}

}  // namespace
}  // namespace oddsrelay
