// A node whose odds history starts after the log's start (an edge joined
// from a snapshot, a node recovered from its data dir) seeds it from the
// engine's state then (HistoryStore::seed): from held_from_seq on, it must
// hold exactly the points of a node that saw the whole log, and the book at
// every later seq must be the engine's, byte for byte.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/core/engine.h"
#include "engine/history/book_at.h"
#include "engine/history/history_store.h"
#include "engine/views/json_views.h"
#include "tests/test_util.h"

namespace oddsrelay::history {
namespace {

using test::market;

const std::string kId = "s7-101.5001";

std::string str(const Point& p) {
  if (!p.priced) return std::to_string(p.ts) + ":null@" + std::to_string(p.seq);
  return std::to_string(p.ts) + ":" + std::to_string(p.price) + "/" + std::to_string(p.flags) + "/" +
         std::to_string(p.s) + "@" + std::to_string(p.seq);
}

// Every outcome's points with seq >= `from`, by "event/market/line/outcome".
std::map<std::string, std::vector<std::string>> points_from(const HistoryStore& store,
                                                            const std::set<uint64_t>& numbers, uint64_t from) {
  std::map<std::string, std::vector<std::string>> out;
  for (uint64_t n : numbers)
    store.read(n, [&](const EventHistory* h, const HeldState&) {
      if (!h) return;
      for (const OutcomeHistory& o : h->outcomes())
        for (const Point& p : h->points_of(o))
          if (p.seq >= from)
            out[std::to_string(n) + "/" + std::to_string(o.key.market) + "/" + std::string(o.key.line.view()) + "/" +
                std::to_string(o.key.outcome)]
                .push_back(str(p));
    });
  return out;
}

std::string encode(const MarketList& ms) {
  std::string out;
  json::StringSink sink(out);
  json::Writer w(sink);
  EventEntry tmp;
  tmp.markets = ms;
  views::write_odds(w, tmp, views::OddsForm::Get);
  return out;
}

// Two nodes on one simulated log: `full` records it all, `late` joins
// after 1,500 records. From the join on, the points are the same, every
// one; the late node holds none before it; the book at every later seq is
// the engine's.
TEST(HistorySeed, FromHeldFromSeqOnALateNodeHoldsThePointsOfTheWholeLog) {
  const auto recs = test::sim_records(4000);
  std::set<uint64_t> numbers;
  for (const auto& rec : recs) numbers.insert(rec.number);
  Engine full_engine, late_engine;
  HistoryStore full, late;
  for (const auto& rec : recs) {
    full_engine.apply(feed::Record(rec));
    if (auto b = full_engine.commit()) full.apply(*b);
  }
  for (size_t i = 0; i < 1500; ++i) late_engine.apply(feed::Record(recs[i]));
  late_engine.commit();
  const SnapshotPtr joined = late_engine.current();
  const uint64_t from = joined->seq + 1;
  late.seed(*joined);
  EXPECT_EQ(late.state().held_from_seq, from);
  EXPECT_EQ(late.state().points, 0u);
  uint64_t books = 0;
  for (size_t i = 1500; i < recs.size(); ++i) {
    late_engine.apply(feed::Record(recs[i]));
    auto b = late_engine.commit();
    ASSERT_TRUE(b);
    late.apply(*b);
    if (b->snapshot->seq % 7 != 0) continue;
    b->snapshot->events.for_each([&](const EventEntry& e) {
      late.read(e.number, [&](const EventHistory* h, const HeldState&) {
        ASSERT_EQ(encode(h ? book_at(*h, b->snapshot->seq) : MarketList{}), encode(e.markets))
            << "event " << e.number << " at seq " << b->snapshot->seq;
        ++books;
      });
    });
  }
  EXPECT_GT(books, 1000u);
  EXPECT_EQ(full.state().held_from_seq, 0u);
  EXPECT_EQ(late.state().held_from_seq, from);
  const auto want = points_from(full, numbers, from), got = points_from(late, numbers, 0);
  size_t n = 0;
  for (const auto& [k, v] : want) n += v.size();
  EXPECT_GT(n, 1000u);
  EXPECT_EQ(got, want);
  EXPECT_EQ(late.state().points, n);
}

// An edge that rejoins the log after a hole gets a new state in a `reset`
// batch: its history starts again from that state, as at a join.
TEST(HistorySeed, AReplacedStateStartsTheHistoryAgainFromIt) {
  const auto recs = test::sim_records(3000);
  std::set<uint64_t> numbers;
  for (const auto& rec : recs) numbers.insert(rec.number);
  Engine full_engine, engine, fresh;
  HistoryStore full, store;
  for (const auto& rec : recs) {
    full_engine.apply(feed::Record(rec));
    if (auto b = full_engine.commit()) full.apply(*b);
  }
  for (size_t i = 0; i < 1000; ++i) {
    engine.apply(feed::Record(recs[i]));
    if (auto b = engine.commit()) store.apply(*b);
  }
  EXPECT_EQ(store.state().held_from_seq, 0u);
  EXPECT_GT(store.state().points, 0u);
  for (size_t i = 0; i < 2000; ++i) fresh.apply(feed::Record(recs[i]));
  fresh.commit();
  auto reset = engine.replace_state(fresh);
  ASSERT_TRUE(reset && reset->reset);
  engine.publish(reset);
  store.apply(*reset);
  const uint64_t from = reset->snapshot->seq + 1;
  EXPECT_EQ(from, 2001u);
  EXPECT_EQ(store.state().held_from_seq, from);
  EXPECT_EQ(store.state().points, 0u);
  for (size_t i = 2000; i < recs.size(); ++i) {
    engine.apply(feed::Record(recs[i]));
    if (auto b = engine.commit()) store.apply(*b);
  }
  const auto want = points_from(full, numbers, from);
  EXPECT_FALSE(want.empty());
  EXPECT_EQ(points_from(store, numbers, 0), want);
}

// open and close are points the node holds: an outcome unchanged since the
// join has neither; one that moved opens at its first point after it; an
// event live before the join has no close.
TEST(HistorySeed, OpenAndCloseArePointsTheNodeHolds) {
  const std::string live = "s7-101.5002";
  Engine engine;
  for (auto r :
       {test::event(500, kId, 1, false), test::event(500, live, 1, true),
        market(1000, kId, 1, {{"s", 0, {{1, 150, 0}, {2, 250, 0}}}}), market(1000, live, 1, {{"s", 0, {{1, 300, 0}}}})})
    engine.apply(std::move(r));
  engine.commit();
  HistoryStore store;
  store.seed(*engine.current());
  EXPECT_EQ(store.state().held_from_seq, 5u);
  EXPECT_EQ(store.state().held_from, 1000);
  for (auto r : {market(2000, kId, 1, {{"s", 0, {{1, 150, 0}, {2, 260, 0}}}}), test::event(3000, kId, 1, true),
                 market(3000, live, 1, {{"s", 0, {{1, 310, 0}}}})}) {
    engine.apply(std::move(r));
    if (auto b = engine.commit()) store.apply(*b);
  }
  auto outcome = [&](const std::string& id, uint32_t o, auto&& fn) {
    store.read(test::event(0, id, 1, false).number, [&](const EventHistory* h, const HeldState&) {
      ASSERT_TRUE(h);
      const auto oh = h->find(OutcomeKey{1, LineKey("s"), o});
      ASSERT_TRUE(oh);
      fn(*h, *oh);
    });
  };
  outcome(kId, 1, [](const EventHistory& h, const OutcomeHistory& o) {
    EXPECT_TRUE(h.points_of(o).empty());
    EXPECT_FALSE(h.open_of(o).priced);
    EXPECT_FALSE(h.close_of(o).priced);
    EXPECT_EQ(h.live_seq(), 6u);
  });
  outcome(kId, 2, [](const EventHistory& h, const OutcomeHistory& o) {
    const std::vector<Point> pts = h.points_of(o);
    ASSERT_EQ(pts.size(), 1u);
    EXPECT_EQ(str(pts[0]), "2000:260/0/0@5");
    EXPECT_EQ(str(h.open_of(o)), "2000:260/0/0@5");
    EXPECT_EQ(str(h.close_of(o)), "2000:260/0/0@5");
  });
  outcome(live, 1, [](const EventHistory& h, const OutcomeHistory& o) {
    EXPECT_EQ(h.live_seq(), 4u);
    EXPECT_EQ(str(h.open_of(o)), "3000:310/0/0@7");
    EXPECT_FALSE(h.close_of(o).priced);
  });
}

}  // namespace
}  // namespace oddsrelay::history
