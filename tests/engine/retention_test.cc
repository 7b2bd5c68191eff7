// Retention (engine/core/retention.h): an ended or unlisted event leaves the
// state once the feed clock (the newest `at`) is the horizon past its last
// record, not a millisecond before; a listed event that has not ended stays;
// a late record for an evicted event starts it afresh; and the state at
// every seq is the same however the records are batched, because eviction
// happens inside apply(), record by record.
#include "engine/core/retention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>

#include "engine/core/engine.h"
#include "engine/core/state_digest.h"
#include "engine/sources/simulator.h"
#include "tests/test_util.h"

namespace oddsrelay {
namespace {

using test::market;

constexpr int64_t kHorizon = 10'000;

feed::Record score(int64_t at, const std::string& id, int home, int away, const char* status) {
  return test::rec("{\"at\":" + std::to_string(at) + ",\"op\":\"score\",\"id\":\"" + id + "\",\"home\":" +
                   std::to_string(home) + ",\"away\":" + std::to_string(away) + ",\"status\":\"" + status + "\"}");
}

// A record for an unrelated event (listed, pre-match: never due) that only
// moves the feed clock.
feed::Record tick(int64_t at) { return test::event(at, "900", 1, false); }

uint64_t sum_entry_bytes(const Snapshot& s) {
  uint64_t n = 0;
  s.events.for_each([&](const EventEntry& e) { n += entry_bytes(e); });
  return n;
}

TEST(Retention, EndedEventLeavesAtTheHorizonNotBefore) {
  Engine e;
  e.set_retain_ended_ms(kHorizon);
  // 1: live, priced, ended at 1000 and still listed. 2: live, never ends.
  // 3: removed at 1000 without a final, with stats. 4: pre-match, no end.
  test::apply_all(e, {test::event(500, "1", 1, true), market(500, "1", 1001, {{"s", 0, {{2001, 185, 0}}}}),
                      test::event(500, "2", 1, true), test::event(500, "3", 2, true),
                      test::rec(R"({"at":600,"op":"stats","id":"3","corners":[1,0]})"), test::event(500, "4", 1, false),
                      score(1000, "1", 2, 1, "ended"), test::rec(R"({"at":1000,"op":"remove","id":"3"})")});
  SnapshotPtr s = e.current();
  EXPECT_EQ(s->ended, 1u);
  EXPECT_EQ(s->ended_live, 1u);
  EXPECT_EQ(s->listed_live, 2u);
  const uint64_t bytes_before = s->bytes;
  EXPECT_EQ(bytes_before, sum_entry_bytes(*s));

  // One millisecond short of the horizon: everything stays.
  test::apply_all(e, {tick(1000 + kHorizon - 1)});
  s = e.current();
  EXPECT_NE(s->events.find(1), nullptr);
  EXPECT_NE(s->events.find(3), nullptr);
  EXPECT_EQ(s->evicted, 0u);
  EXPECT_EQ(s->feed_clock, 1000 + kHorizon - 1);

  // At the horizon: the ended event and the removed one leave; the live
  // event and the pre-match one, older still, stay (listed, not ended).
  e.apply(tick(1000 + kHorizon));
  BatchPtr b = e.commit();
  s = e.current();
  EXPECT_EQ(s->events.find(1), nullptr);
  EXPECT_EQ(s->events.find(3), nullptr);
  EXPECT_NE(s->events.find(2), nullptr);
  EXPECT_NE(s->events.find(4), nullptr);
  EXPECT_EQ(s->evicted, 2u);
  EXPECT_EQ(s->events.size(), 3u);  // 2, 4 and the ticking event 900
  EXPECT_EQ(s->ended, 0u);
  EXPECT_EQ(s->ended_live, 0u);
  EXPECT_EQ(s->listed_live, 1u);
  EXPECT_EQ(s->markets, 0u);  // event 1's market went with it
  EXPECT_LT(s->bytes, bytes_before);
  EXPECT_EQ(s->bytes, sum_entry_bytes(*s));
  EXPECT_EQ(s->seq, 10u);  // evictions take no log position
  // The batch says so: the listed event left the lists with its market.
  const EventChange* c1 = nullptr;
  const EventChange* c3 = nullptr;
  for (const EventChange& c : b->changes) {
    if (c.number == 1) c1 = &c;
    if (c.number == 3) c3 = &c;
  }
  ASSERT_NE(c1, nullptr);
  EXPECT_EQ(c1->bits, kEventRemoved | kEventEvicted | kOddsChanged);
  EXPECT_EQ(c1->sport, 1);
  EXPECT_TRUE(c1->live);
  EXPECT_EQ(std::vector<uint32_t>(b->markets_of(*c1).begin(), b->markets_of(*c1).end()), std::vector<uint32_t>{1001});
  ASSERT_NE(c3, nullptr);
  EXPECT_EQ(c3->bits, kEventEvicted);  // it had left the lists already
}

TEST(Retention, ANewerRecordPostponesAndTheClockIsAMax) {
  Engine e;
  e.set_retain_ended_ms(kHorizon);
  test::apply_all(e, {score(1000, "1", 0, 0, "ended"), tick(5000)});
  // A correction at 8000 restarts event 1's horizon.
  test::apply_all(e, {score(8000, "1", 1, 0, "ended")});
  test::apply_all(e, {tick(8000 + kHorizon - 1)});
  ASSERT_NE(e.current()->events.find(1), nullptr);
  EXPECT_EQ(e.current()->events.find(1)->score->final_version, 2u);
  // A record back in time moves `clock` but not the feed clock.
  test::apply_all(e, {tick(100)});
  EXPECT_EQ(e.current()->clock, 100);
  EXPECT_EQ(e.current()->feed_clock, 8000 + kHorizon - 1);
  ASSERT_NE(e.current()->events.find(1), nullptr);
  test::apply_all(e, {tick(8000 + kHorizon)});
  EXPECT_EQ(e.current()->events.find(1), nullptr);
  EXPECT_EQ(e.current()->evicted, 1u);
}

TEST(Retention, LateRecordAfterEvictionIsANewEvent) {
  Engine e;
  e.set_retain_ended_ms(kHorizon);
  test::apply_all(e, {test::event(1000, "1", 1, true), score(1000, "1", 2, 1, "ended"), tick(1000 + kHorizon)});
  ASSERT_EQ(e.current()->events.find(1), nullptr);
  const uint64_t applied = e.applied(), seq = e.current()->seq;
  // A late correction: applied (it takes a position) as for an event never
  // seen: a first final, version 1, with no listing and no odds.
  e.apply(score(1000 + kHorizon + 5, "1", 2, 2, "ended"));
  BatchPtr b = e.commit();
  EXPECT_EQ(e.applied(), applied + 1);
  EXPECT_EQ(e.current()->seq, seq + 1);
  const EventEntry* ev = e.current()->events.find(1);
  ASSERT_NE(ev, nullptr);
  EXPECT_FALSE(ev->listed());
  EXPECT_EQ(ev->score->final_version, 1u);
  EXPECT_EQ(ev->score->final_score, std::make_pair(2, 2));
  EXPECT_TRUE(ev->score->odds_at_end.empty());
  ASSERT_EQ(b->changes.size(), 1u);
  EXPECT_EQ(b->changes[0].bits, kScoreChanged | kFinalChanged);
  EXPECT_EQ(e.current()->ended, 1u);
  // A `remove` for an evicted event is a remove of an unknown one: skipped.
  test::apply_all(e, {score(1000 + 3 * kHorizon, "2", 0, 0, "ended")});  // evicts 1 again
  ASSERT_EQ(e.current()->events.find(1), nullptr);
  EXPECT_EQ(e.apply(test::rec(R"({"at":40000,"op":"remove","id":"1"})")), ApplyResult::SkippedUnknownEvent);
  EXPECT_EQ(e.current()->evicted, 2u);
}

TEST(Retention, EvictedAndBackWithinOneBatchIsOneChange) {
  Engine e;
  e.set_retain_ended_ms(kHorizon);
  test::apply_all(e, {test::event(1000, "1", 1, true), score(1000, "1", 2, 1, "ended")});
  e.apply(tick(1000 + kHorizon));                       // evicts 1
  e.apply(test::event(1000 + kHorizon, "1", 1, true));  // and it comes back
  BatchPtr b = e.commit();
  size_t for_1 = 0;
  for (const EventChange& c : b->changes)
    if (c.number == 1) {
      ++for_1;
      EXPECT_EQ(c.bits, kEventRemoved | kEventEvicted | kEventAdded);
    }
  EXPECT_EQ(for_1, 1u);
  const EventEntry* ev = e.current()->events.find(1);
  ASSERT_NE(ev, nullptr);
  EXPECT_TRUE(ev->listed());
  EXPECT_EQ(ev->score, nullptr);  // the final went with the eviction
}

// The simulator's feed with fast matches, corrections and a horizon of a
// few virtual seconds: fixtures end, get corrected (some after they left),
// are removed (some after they left) and replaced.
std::vector<feed::Record> sim_feed(size_t n) {
  sim::SimOptions o;
  o.seed = 11;
  o.events = 30;
  o.rate = 300;
  o.minute_ms = 20;
  o.tick_ms = 100;
  o.correct_permille = 300;
  sim::Simulator sim(o);
  std::vector<feed::Record> out;
  sim.open(1'000'000, 1'000'000, out);
  while (out.size() < n) sim.step(sim.now(), out);
  out.resize(n);
  return out;
}

constexpr int64_t kSimHorizon = 3000;

// The lines an event withdrew (engine/core/line_history.h) live in its entry:
// they count in the state's bytes while it is held and leave with it.
TEST(Retention, WithdrawnLinesCountAndLeaveWithTheirEvent) {
  Engine e;
  e.set_retain_ended_ms(kHorizon);
  // Event 1 withdraws line s1.5 by a new read, then ends. Event 2 is
  // removed with its market priced, so its lines are withdrawn by the
  // removal; its score keeps it held.
  test::apply_all(e, {test::event(500, "1", 1, true),
                      market(500, "1", 1001, {{"s1.5", 0, {{2001, 185, 0}}}, {"s2.5", 0, {{2002, 200, 0}}}}),
                      market(600, "1", 1001, {{"s2.5", 0, {{2002, 210, 0}}}}), test::event(500, "2", 1, true),
                      market(500, "2", 1001, {{"s0.5", 0, {{2003, 150, 0}}}}), score(700, "2", 0, 0, "live"),
                      score(1000, "1", 2, 1, "ended"), test::rec(R"({"at":1000,"op":"remove","id":"2"})")});
  SnapshotPtr s = e.current();
  const EventEntry* e1 = s->events.find(1);
  const EventEntry* e2 = s->events.find(2);
  ASSERT_TRUE(e1 && e1->history && e2 && e2->history);
  EXPECT_EQ(e1->history->lines, 1u);
  EXPECT_EQ(e2->history->lines, 1u);
  EXPECT_EQ(s->bytes, sum_entry_bytes(*s));
  EXPECT_GT(history_bytes(e1->history.get()), 0u);

  test::apply_all(e, {tick(1000 + kHorizon)});
  s = e.current();
  EXPECT_EQ(s->events.find(1), nullptr);
  EXPECT_EQ(s->events.find(2), nullptr);
  EXPECT_EQ(s->evicted, 2u);
  EXPECT_EQ(s->bytes, sum_entry_bytes(*s));
  // A late record starts event 1 afresh: no history comes back with it.
  test::apply_all(e, {market(1000 + kHorizon + 1, "1", 1001, {{"s3.5", 0, {{2004, 300, 0}}}})});
  s = e.current();
  ASSERT_NE(s->events.find(1), nullptr);
  EXPECT_EQ(s->events.find(1)->history, nullptr);
  EXPECT_EQ(s->bytes, sum_entry_bytes(*s));
}

TEST(Retention, EveryBatchingGivesTheSameStateAtEverySeq) {
  const std::vector<feed::Record> feed = sim_feed(12000);
  // The reference takes a batch per record; four other batchings (fixed
  // sizes and random ones) take the same records in step with it, and
  // every commit of theirs must land on the reference's digest for that
  // position. The reference's digest is made only where one of them
  // commits: made at every position, it was most of the test's time.
  Engine ref;
  ref.set_retain_ended_ms(kSimHorizon);
  struct Batching {
    Engine e;
    size_t in_batch = 0, limit = 0, compared = 0;
  };
  std::mt19937 rng(7);
  std::vector<Batching> modes(4);
  modes[0].limit = 7;
  modes[1].limit = 64;
  modes[2].limit = 256;
  modes[3].limit = 1 + rng() % 300;
  for (Batching& m : modes) m.e.set_retain_ended_ms(kSimHorizon);
  for (const feed::Record& r : feed) {
    feed::Record copy = r;
    ref.apply(std::move(copy));
    ref.commit();
    std::optional<uint64_t> ref_digest;
    for (size_t mode = 0; mode < modes.size(); ++mode) {
      Batching& m = modes[mode];
      copy = r;
      m.e.apply(std::move(copy));
      if (++m.in_batch < m.limit) continue;
      m.in_batch = 0;
      if (mode == 3) m.limit = 1 + rng() % 300;
      if (BatchPtr b = m.e.commit()) {
        if (!ref_digest) ref_digest = state_digest(*ref.current());
        ASSERT_EQ(b->snapshot->seq, ref.current()->seq) << "mode " << mode;
        ASSERT_EQ(state_digest(*b->snapshot), *ref_digest) << "mode " << mode << " seq " << b->snapshot->seq;
        ++m.compared;
      }
    }
  }
  SnapshotPtr end = ref.current();
  ASSERT_GT(end->evicted, 50u) << "the feed should evict many events";
  ASSERT_GT(ref.skipped(), 0u) << "removals of evicted events should be skipped";
  EXPECT_EQ(end->bytes, sum_entry_bytes(*end));
  for (size_t mode = 0; mode < modes.size(); ++mode) {
    Engine& e = modes[mode].e;
    e.commit();
    EXPECT_GT(modes[mode].compared, 10u);
    EXPECT_EQ(state_digest(*e.current()), state_digest(*end)) << "mode " << mode;
    EXPECT_EQ(e.current()->evicted, end->evicted);
    EXPECT_EQ(e.current()->ended, end->ended);
    EXPECT_EQ(e.current()->bytes, end->bytes);
  }
}

TEST(Retention, HeldEventsStayBoundedWhileFixturesComeAndGo) {
  const std::vector<feed::Record> feed = sim_feed(40000);
  Engine e;
  e.set_retain_ended_ms(kSimHorizon);
  size_t most = 0, i = 0;
  for (const feed::Record& r : feed) {
    feed::Record copy = r;
    e.apply(std::move(copy));
    if (++i % 500 == 0) {
      e.commit();
      if (i > feed.size() / 2) most = std::max(most, e.current()->events.size());
    }
  }
  e.commit();
  SnapshotPtr s = e.current();
  // Without retention every fixture ever created would be held.
  uint64_t fixtures = 0;
  std::vector<uint64_t> seen;
  for (const feed::Record& r : feed) seen.push_back(r.number);
  std::sort(seen.begin(), seen.end());
  fixtures = static_cast<uint64_t>(std::unique(seen.begin(), seen.end()) - seen.begin());
  EXPECT_GT(fixtures, 4 * most) << "held " << most << " of " << fixtures;
  // Every fixture that left, left by retention (some twice: a late
  // correction brings one back for another horizon).
  EXPECT_GE(s->evicted, fixtures - s->events.size());
  EXPECT_LE(s->evicted, 2 * fixtures);
}

}  // namespace
}  // namespace oddsrelay
