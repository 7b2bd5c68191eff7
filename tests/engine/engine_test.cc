#include "engine/core/engine.h"

#include <gtest/gtest.h>

#include <tuple>

#include "engine/core/state_digest.h"
#include "tests/test_util.h"

namespace oddsrelay {
using test::L;
using test::market;

namespace {

const Market* find_market(const Snapshot& s, uint64_t number, uint32_t id) {
  const EventEntry* e = s.events.find(number);
  return e ? e->market(id) : nullptr;
}

}  // namespace

TEST(Engine, DerivesSpecialLsAndTs) {
  Engine e;
  test::apply_all(e, {market(1000, "s7-1.5", 1001,
                             {{"s", 0, {{2001, 185, 0}, {2002, 340, 0}}},
                              {"s2.5", 0, {{2101, 190, 0}}},
                              {"s1:0", 0, {{2201, 700, 0}}},
                              {"s-0.75", 1, {}}})});
  const Market* m = find_market(*e.current(), 5, 1001);
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->lines.size(), 4u);
  EXPECT_EQ(m->lines[0].key.special(), "");  // bare `s`: special null
  EXPECT_EQ(m->lines[1].key.special(), "2.5");
  EXPECT_EQ(m->lines[2].key.special(), "1:0");
  EXPECT_EQ(m->lines[3].key.special(), "-0.75");
  EXPECT_EQ(m->lines[3].count, 0u);  // empty rung
  EXPECT_EQ(m->lines[3].suspended, 1);
  for (const Line& l : m->lines) EXPECT_EQ(l.ls, 1000);
  for (const Outcome& o : m->outcomes) EXPECT_EQ(o.ts, 1000);
}

TEST(Engine, OutcomeTsChangesOnlyWithPriceOrFlags) {
  Engine e;
  test::apply_all(e, {market(1000, "5", 1001, {{"s", 0, {{2001, 185, 0}, {2002, 340, 0}, {2003, 420, 0}}}})});
  // 2001 unchanged, 2002 price moves, 2003 gets flagged; order of lines/outcomes shuffled.
  test::apply_all(e, {market(2000, "5", 1001, {{"s", 0, {{2003, 420, 4}, {2002, 350, 0}, {2001, 185, 0}}}})});
  const Market* m = find_market(*e.current(), 5, 1001);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->lines[0].ls, 2000);
  for (const Outcome& o : m->outcomes) {
    EXPECT_EQ(o.ts, o.id == 2001 ? 1000 : 2000) << o.id;
    EXPECT_EQ(o.prev_price, o.id == 2002 ? 340 : o.price) << o.id;  // only 2002's price moved
  }
  // The previous price survives updates that do not move the price.
  test::apply_all(e, {market(2500, "5", 1001, {{"s", 0, {{2002, 350, 4}}}})});
  EXPECT_EQ(find_market(*e.current(), 5, 1001)->outcomes[0].prev_price, 340);
  // A line that disappears and comes back starts afresh.
  test::apply_all(e, {market(3000, "5", 1001, {{"s2.5", 0, {{2101, 190, 0}}}})});
  test::apply_all(e, {market(4000, "5", 1001, {{"s", 0, {{2001, 185, 0}}}})});
  EXPECT_EQ(find_market(*e.current(), 5, 1001)->outcomes[0].ts, 4000);
}

TEST(Engine, EmptyLinesRemoveTheMarket) {
  Engine e;
  test::apply_all(
      e, {market(1, "5", 1001, {{"s", 0, {{2001, 185, 0}}}}), market(1, "5", 1019, {{"s", 0, {{2010, 150, 0}}}})});
  EXPECT_EQ(e.current()->markets, 2u);
  test::apply_all(e, {test::rec(R"({"at":2,"op":"market","id":"5","market":1001,"lines":{}})")});
  EXPECT_EQ(find_market(*e.current(), 5, 1001), nullptr);
  EXPECT_NE(find_market(*e.current(), 5, 1019), nullptr);
  EXPECT_EQ(e.current()->markets, 1u);
  EXPECT_EQ(e.current()->outcomes, 1u);
}

TEST(Engine, AllIdFormsHitOneEvent) {
  Engine e;
  test::apply_all(e, {test::event(1, "s7-101.42", 1, true), market(2, "s7_l101.42", 1001, {{"s", 0, {{2001, 185, 0}}}}),
                      market(3, "42", 1019, {{"s", 0, {{2010, 150, 0}}}})});
  SnapshotPtr s = e.current();
  EXPECT_EQ(s->events.size(), 1u);
  const EventEntry* ev = s->events.find(42);
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ(ev->key, "s7-101.42");  // display key: the event record's id
  EXPECT_EQ(ev->markets.size(), 2u);
}

TEST(Engine, CountsListedEventsPerSport) {
  Engine e;
  test::apply_all(e, {test::event(1, "1", 1, true), test::event(1, "2", 1, false), test::event(1, "3", 2, false)});
  SnapshotPtr s = e.current();
  EXPECT_EQ(s->listed_live, 1u);
  EXPECT_EQ(s->listed_prematch, 2u);
  ASSERT_EQ(s->sports.size(), 2u);
  EXPECT_EQ(s->sports[0].sport, 1);
  EXPECT_EQ(s->sports[0].live, 1u);
  EXPECT_EQ(s->sports[0].prematch, 1u);
  // Going live moves the count; a removal drops it.
  test::apply_all(e, {test::event(2, "2", 1, true), test::rec(R"({"at":3,"op":"remove","id":"3"})")});
  s = e.current();
  EXPECT_EQ(s->listed_live, 2u);
  EXPECT_EQ(s->listed_prematch, 0u);
  ASSERT_EQ(s->sports.size(), 1u);
}

TEST(Engine, RemoveDropsListingAndOddsButKeepsScore) {
  Engine e;
  test::apply_all(e, {test::event(1, "7", 1, true), market(2, "7", 1001, {{"s", 0, {{2001, 185, 0}}}}),
                      test::rec(R"({"at":3,"op":"score","id":"7","home":1,"away":0,"status":"ended"})"),
                      test::rec(R"({"at":4,"op":"remove","id":"7"})")});
  SnapshotPtr s = e.current();
  const EventEntry* ev = s->events.find(7);
  ASSERT_NE(ev, nullptr);
  EXPECT_FALSE(ev->listed());
  EXPECT_TRUE(ev->markets.empty());
  ASSERT_NE(ev->score, nullptr);
  EXPECT_EQ(ev->score->final_score, std::make_pair(1, 0));
  EXPECT_EQ(s->markets, 0u);
  // An event with nothing left to keep is dropped whole.
  test::apply_all(e, {test::event(5, "8", 1, false), test::rec(R"({"at":6,"op":"remove","id":"8"})")});
  EXPECT_EQ(e.current()->events.find(8), nullptr);
  // Removed and re-added within one batch: kept, and one change for it.
  e.apply(test::event(7, "8", 1, false));
  e.apply(test::rec(R"({"at":8,"op":"remove","id":"8"})"));
  e.apply(market(9, "8", 1001, {{"s", 0, {{2001, 185, 0}}}}));
  BatchPtr b = e.commit();
  ASSERT_NE(e.current()->events.find(8), nullptr);
  EXPECT_EQ(b->changes.size(), 1u);
}

// /v1/scores shows a score's kickoff from its record, else from the event;
// removal drops the event object, so the score keeps the event's kickoff.
TEST(Engine, RemovedEventsScoreKeepsTheEventsKickoff) {
  Engine e;
  test::apply_all(e, {test::event(1, "7", 1, true),
                      test::rec(R"({"at":3,"op":"score","id":"7","home":1,"away":0,"status":"live"})")});
  EXPECT_FALSE(e.current()->events.find(7)->score->last.kickoff);  // listed: the event's ts is read live
  test::apply_all(e, {test::rec(R"({"at":4,"op":"remove","id":"7"})")});
  const EventEntry* ev = e.current()->events.find(7);
  ASSERT_NE(ev, nullptr);
  ASSERT_FALSE(ev->listed());
  EXPECT_EQ(ev->score->last.kickoff, std::optional<int64_t>(1767225600));
  EXPECT_EQ(ev->score->last.home, std::optional<int32_t>(1));
  // A later record without a kickoff keeps it; one with its own replaces it.
  test::apply_all(e, {test::rec(R"({"at":5,"op":"score","id":"7","home":2,"away":0,"status":"ended"})")});
  EXPECT_EQ(e.current()->events.find(7)->score->last.kickoff, std::optional<int64_t>(1767225600));
  EXPECT_EQ(e.current()->events.find(7)->score->last.home, std::optional<int32_t>(2));
  test::apply_all(
      e, {test::rec(R"({"at":6,"op":"score","id":"7","home":2,"away":0,"status":"ended","kickoff":1767229200})")});
  EXPECT_EQ(e.current()->events.find(7)->score->last.kickoff, std::optional<int64_t>(1767229200));
  // A record's own kickoff is never replaced by the event's.
  test::apply_all(e, {test::event(7, "8", 1, true),
                      test::rec(R"({"at":8,"op":"score","id":"8","status":"live","kickoff":1767000000})"),
                      test::rec(R"({"at":9,"op":"remove","id":"8"})")});
  EXPECT_EQ(e.current()->events.find(8)->score->last.kickoff, std::optional<int64_t>(1767000000));
}

TEST(Engine, RemoveOfUnknownEventIsSkippedAndCounted) {
  Engine e;
  EXPECT_EQ(e.apply(test::rec(R"({"at":1,"op":"remove","id":"99"})")), ApplyResult::SkippedUnknownEvent);
  EXPECT_EQ(e.skipped(), 1u);
  EXPECT_EQ(e.commit(), nullptr);  // nothing applied: nothing published
  EXPECT_EQ(e.current()->seq, 0u);
}

// A remove that empties an event, then a second remove and a market under
// another id form: the result (state, display id, what was skipped) must
// not depend on whether they share a batch, or a replay with other batch
// boundaries would differ from the live run.
TEST(Engine, RemoveAndReAddDoNotDependOnBatching) {
  const std::vector<std::string> lines = {
      R"({"at":1,"op":"event","id":"s7-1.9","event":{"h":"A","a":"B","sport":1,"live":false,"ts":5}})",
      R"({"at":2,"op":"remove","id":"s7-1.9"})", R"({"at":3,"op":"remove","id":"s7-1.9"})",
      R"({"at":4,"op":"market","id":"9","market":1001,"lines":{"s":{"s":0,"o":{"1":[150,0]}}}})"};
  auto run = [&](bool one_batch) {
    Engine e;
    for (const auto& l : lines) {
      e.apply(test::rec(l));
      if (!one_batch) e.commit();
    }
    e.commit();
    return std::make_tuple(e.applied(), e.skipped(), e.current()->clock, e.current()->events.find(9)->key,
                           dump_state(*e.current()));
  };
  auto together = run(true), apart = run(false);
  EXPECT_EQ(std::get<0>(apart), 3u);
  EXPECT_EQ(std::get<1>(apart), 1u) << "the second remove finds nothing to remove";
  EXPECT_EQ(std::get<3>(apart), "9") << "the emptied event was dropped: the market's id names the new one";
  EXPECT_EQ(together, apart);
}

TEST(Engine, FinalScoreFixedThenCorrected) {
  Engine e;
  test::apply_all(e, {market(1, "9", 1001, {{"s", 1, {{2001, 185, 0}}}}),
                      test::rec(R"({"at":2,"op":"score","id":"9","home":2,"away":1,"status":"ended"})")});
  auto sc = e.current()->events.find(9)->score;
  EXPECT_EQ(sc->final_version, 1u);
  EXPECT_EQ(sc->final_at, 2);
  ASSERT_NE(find_market(sc->odds_at_end, 1001), nullptr);  // odds as last read before full time
  EXPECT_EQ(find_market(sc->odds_at_end, 1001)->lines[0].suspended, 1);
  // The same final again changes nothing; another score is a correction.
  test::apply_all(e, {test::rec(R"({"at":3,"op":"score","id":"9","home":2,"away":1,"status":"ended"})")});
  EXPECT_EQ(e.current()->events.find(9)->score->final_version, 1u);
  BatchPtr b;
  e.apply(test::rec(R"({"at":4,"op":"score","id":"9","home":2,"away":2,"status":"ended"})"));
  b = e.commit();
  sc = e.current()->events.find(9)->score;
  EXPECT_EQ(sc->final_version, 2u);
  EXPECT_EQ(sc->final_score, std::make_pair(2, 2));
  EXPECT_EQ(sc->final_at, 4);
  ASSERT_EQ(b->changes.size(), 1u);
  EXPECT_TRUE(b->changes[0].bits & kFinalChanged);
  EXPECT_FALSE(b->changes[0].ended) << "a correction is not the first end";
}

// The batch of an event's first `ended` says so on its change (webhooks'
// event_ended is made from it), once, even when a correction follows in
// the same batch; no later batch says it again.
TEST(Engine, TheFirstEndIsMarkedOnItsBatchsChange) {
  Engine e;
  e.apply(test::rec(R"({"at":1,"op":"score","id":"9","home":1,"away":0,"status":"live"})"));
  BatchPtr b = e.commit();
  ASSERT_EQ(b->changes.size(), 1u);
  EXPECT_FALSE(b->changes[0].ended);
  e.apply(test::rec(R"({"at":2,"op":"score","id":"9","home":2,"away":1,"status":"ended"})"));
  e.apply(test::rec(R"({"at":3,"op":"score","id":"9","home":2,"away":2,"status":"ended"})"));
  b = e.commit();
  ASSERT_EQ(b->changes.size(), 1u);
  EXPECT_TRUE(b->changes[0].ended);
  EXPECT_TRUE(b->changes[0].bits & kFinalChanged);
  e.apply(test::rec(R"({"at":4,"op":"score","id":"9","home":3,"away":2,"status":"ended"})"));
  b = e.commit();
  ASSERT_EQ(b->changes.size(), 1u);
  EXPECT_TRUE(b->changes[0].bits & kFinalChanged);
  EXPECT_FALSE(b->changes[0].ended);
}

TEST(Engine, EndedWithoutScoreHasNoFinalScore) {
  Engine e;
  test::apply_all(e, {test::rec(R"({"at":2,"op":"score","id":"9","status":"ended","result":"abandoned"})")});
  auto sc = e.current()->events.find(9)->score;
  EXPECT_TRUE(sc->ended);
  EXPECT_FALSE(sc->final_score.has_value());
  EXPECT_EQ(sc->final_result, feed::MatchResult::Abandoned);
}

TEST(Engine, ChangeSetSaysWhatChanged) {
  Engine e;
  test::apply_all(e, {test::event(1, "1", 3, true)});
  e.apply(test::event(2, "1", 3, true));  // identical object: no listing change
  e.apply(market(2, "1", 1080, {{"s", 0, {{2101, 185, 0}}}}));
  e.apply(market(2, "1", 1001, {{"s", 0, {{2001, 185, 0}}}}));
  e.apply(market(3, "1", 1080, {{"s", 0, {{2101, 190, 0}}}}));
  e.apply(test::event(4, "2", 4, false));
  e.apply(test::rec(R"({"at":5,"op":"stats","id":"1","corners":[1,0]})"));
  BatchPtr b = e.commit();
  ASSERT_NE(b, nullptr);
  ASSERT_EQ(b->changes.size(), 2u);
  const EventChange& c1 = b->changes[0];
  EXPECT_EQ(c1.number, 1u);
  EXPECT_EQ(c1.sport, 3);
  EXPECT_TRUE(c1.live);
  EXPECT_EQ(c1.bits, kOddsChanged | kStatsChanged);
  auto ms = b->markets_of(c1);
  EXPECT_EQ(std::vector<uint32_t>(ms.begin(), ms.end()), (std::vector<uint32_t>{1001, 1080}));
  EXPECT_EQ(b->changes[1].bits, kEventAdded);
  EXPECT_EQ(b->records.size(), 6u);
  EXPECT_EQ(b->snapshot->seq, e.current()->seq);
  // A removal reports the sport and liveness the event had.
  e.apply(test::rec(R"({"at":6,"op":"remove","id":"1"})"));
  b = e.commit();
  EXPECT_EQ(b->changes[0].bits, kEventRemoved | kOddsChanged);
  EXPECT_EQ(b->markets_of(b->changes[0]).size(), 2u);
  EXPECT_EQ(b->changes[0].sport, 3);
  EXPECT_TRUE(b->changes[0].live);
}

TEST(Engine, PublishedSnapshotsNeverChange) {
  Engine e;
  test::apply_all(e, {test::event(1, "1", 1, true), market(1, "1", 1001, {{"s", 0, {{2001, 185, 0}}}})});
  SnapshotPtr old = e.current();
  for (int i = 0; i < 50; ++i)
    test::apply_all(e, {market(10 + i, "1", 1001, {{"s", 0, {{2001, 200 + i, 0}}}}),
                        test::event(10 + i, std::to_string(100 + i), 2, false)});
  EXPECT_EQ(old->events.size(), 1u);
  EXPECT_EQ(old->events.find(1)->market(1001)->outcomes[0].price, 185);
  EXPECT_EQ(e.current()->events.find(1)->market(1001)->outcomes[0].price, 249);
  EXPECT_EQ(e.current()->seq, old->seq + 100);  // seq counts records: two a round
}

}  // namespace oddsrelay
