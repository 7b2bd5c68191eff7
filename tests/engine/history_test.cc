// The odds history (engine/history/): which records make points (a price,
// flags or `s` change; an outcome leaving by withdrawal, drop, market
// removal or `remove`; re-pricing), the byte form's round trip and cut,
// candles, the close rule, the memory bound, eviction with the event, and
// that batching does not change a single point.
#include <gtest/gtest.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "engine/core/engine.h"
#include "engine/core/pipeline.h"
#include "engine/history/book_at.h"
#include "engine/history/candles.h"
#include "engine/history/clock_index.h"
#include "engine/history/history_recorder.h"
#include "engine/history/history_store.h"
#include "engine/history/market_log.h"
#include "engine/views/json_views.h"
#include "tests/test_util.h"

namespace oddsrelay::history {
namespace {

using test::L;
using test::market;

const std::string kId = "s7-101.5001";

uint64_t number_of(const std::string& id) { return test::event(0, id, 1, false).number; }

// Applies the records one batch each (or all in one) and records them.
struct Rig {
  Engine engine;
  HistoryStore store;
  explicit Rig(size_t bytes = kDefaultHistoryBytes, uint32_t line_keys = LayoutTable::kMaxLines)
      : store(bytes, line_keys) {}
  void feed(std::vector<feed::Record> recs, bool one_batch = false) {
    for (auto& r : recs) {
      engine.apply(std::move(r));
      if (!one_batch)
        if (auto b = engine.commit()) store.apply(*b);
    }
    if (auto b = engine.commit()) store.apply(*b);
  }
  // The points of one outcome as "ts:price/flags/s@seq" or "ts:null@seq".
  std::vector<std::string> points(const std::string& line, uint32_t outcome, uint32_t m = 1,
                                  const std::string& id = kId) {
    std::vector<std::string> out;
    store.read(number_of(id), [&](const EventHistory* h, const HeldState&) {
      if (!h) return;
      for (const OutcomeHistory& o : h->outcomes())
        if (o.key.market == m && o.key.line.view() == line && o.key.outcome == outcome)
          for (const Point& p : h->points_of(o)) out.push_back(str(p));
    });
    return out;
  }
  static std::string str(const Point& p) {
    if (!p.priced) return std::to_string(p.ts) + ":null@" + std::to_string(p.seq);
    return std::to_string(p.ts) + ":" + std::to_string(p.price) + "/" + std::to_string(p.flags) + "/" +
           std::to_string(p.s) + "@" + std::to_string(p.seq);
  }
};

using V = std::vector<std::string>;

TEST(HistoryPoints, PriceFlagsAndLineSuspensionMakePointsRepeatsDoNot) {
  Rig r;
  r.feed({market(1000, kId, 1, {{"s", 0, {{1, 150, 0}, {2, 250, 0}}}}),
          market(2000, kId, 1, {{"s", 0, {{1, 150, 0}, {2, 250, 0}}}}),    // nothing moved
          market(3000, kId, 1, {{"s", 0, {{1, 160, 0}, {2, 250, 0}}}}),    // price of 1
          market(4000, kId, 1, {{"s", 0, {{1, 160, 4}, {2, 250, 0}}}}),    // flags of 1
          market(5000, kId, 1, {{"s", 1, {{1, 160, 4}, {2, 250, 0}}}})});  // the line's s: both
  EXPECT_EQ(r.points("s", 1), (V{"1000:150/0/0@1", "3000:160/0/0@3", "4000:160/4/0@4", "5000:160/4/1@5"}));
  EXPECT_EQ(r.points("s", 2), (V{"1000:250/0/0@1", "5000:250/0/1@5"}));
}

TEST(HistoryPoints, LeavingTheMarketIsANullPointAndRepricingGoesOn) {
  Rig r;
  r.feed({market(1000, kId, 1, {{"s2.5", 0, {{1, 190, 0}, {2, 195, 0}}}, {"s3.5", 0, {{1, 300, 0}, {2, 140, 0}}}}),
          market(2000, kId, 1, {{"s2.5", 0, {{1, 190, 0}}}, {"s3.5", 0, {{1, 300, 0}, {2, 140, 0}}}}),  // 2 dropped
          market(3000, kId, 1, {{"s3.5", 0, {{1, 300, 0}, {2, 140, 0}}}}),  // line s2.5 withdrawn
          market(4000, kId, 1, {}),                                         // market removed
          market(5000, kId, 1, {{"s2.5", 0, {{1, 185, 0}, {2, 199, 0}}}}),  // priced again
          market(6000, kId, 2, {{"s", 0, {{7, 111, 0}}}}),                  // another market: no point here
          test::rec("{\"at\":7000,\"op\":\"remove\",\"id\":\"" + kId + "\"}")});
  EXPECT_EQ(r.points("s2.5", 1), (V{"1000:190/0/0@1", "3000:null@3", "5000:185/0/0@5", "7000:null@7"}));
  EXPECT_EQ(r.points("s2.5", 2), (V{"1000:195/0/0@1", "2000:null@2", "5000:199/0/0@5", "7000:null@7"}));
  EXPECT_EQ(r.points("s3.5", 1), (V{"1000:300/0/0@1", "4000:null@4"}));
  EXPECT_EQ(r.points("s", 7, 2), (V{"6000:111/0/0@6", "7000:null@7"}));
}

TEST(HistoryPoints, CloseIsTheLastPricedPointBeforeTheEventWentLive) {
  Rig r;
  r.feed({test::event(500, kId, 1, false), market(1000, kId, 1, {{"s", 0, {{1, 150, 0}}}}),
          market(2000, kId, 1, {{"s", 0, {{1, 170, 0}}}}), market(2500, kId, 1, {}), test::event(3000, kId, 1, true),
          market(4000, kId, 1, {{"s", 0, {{1, 120, 0}}}}), test::event(5000, kId, 1, false),
          test::event(6000, kId, 1, true)});
  r.store.read(number_of(kId), [&](const EventHistory* h, const HeldState& st) {
    ASSERT_TRUE(h);
    EXPECT_EQ(h->live_seq(), 5u);
    EXPECT_EQ(st.seq, 8u);
    const OutcomeList outs = h->outcomes();
    ASSERT_EQ(outs.size(), 1u);
    const OutcomeHistory& o = outs[0];
    EXPECT_EQ(Rig::str(h->open_of(o)), "1000:150/0/0@2");
    EXPECT_EQ(Rig::str(h->close_of(o)), "2000:170/0/0@3");
    OutcomeState last;
    h->points_of(o, &last);
    EXPECT_EQ(Rig::str(last.last_priced()), "4000:120/0/0@6");
  });
}

// The same lines with other outcome ids is another layout: the old
// outcome leaves (a null point), the new one is a new series.
TEST(HistoryPoints, OtherOutcomeIdsUnderTheSameLinesAreAnotherLayout) {
  Rig r;
  r.feed({market(1000, kId, 1, {{"s", 0, {{1, 150, 0}}}}), market(2000, kId, 1, {{"s", 0, {{2, 150, 0}}}})});
  EXPECT_EQ(r.points("s", 1), (V{"1000:150/0/0@1", "2000:null@2"}));
  EXPECT_EQ(r.points("s", 2), (V{"2000:150/0/0@2"}));
}

// A ladder moved by a rung keeps its outcome ids and counts: only the line
// keys say it is another layout (the per-record check reads them from the
// store's line ids), and the moved rung's quotes are its own series.
TEST(HistoryPoints, TheSameOutcomeIdsUnderOtherLinesAreAnotherLayout) {
  Rig r;
  r.feed({market(1000, kId, 1, {{"s2.5", 0, {{1, 150, 0}, {2, 250, 0}}}, {"s3.5", 0, {{1, 300, 0}, {2, 130, 0}}}}),
          market(2000, kId, 1, {{"s3.5", 0, {{1, 300, 0}, {2, 130, 0}}}, {"s4.5", 0, {{1, 500, 0}, {2, 110, 0}}}}),
          market(3000, kId, 1, {{"s3.5", 0, {{1, 310, 0}, {2, 125, 0}}}, {"s4.5", 0, {{1, 500, 0}, {2, 111, 0}}}})});
  EXPECT_EQ(r.points("s2.5", 1), (V{"1000:150/0/0@1", "2000:null@2"}));
  EXPECT_EQ(r.points("s3.5", 1), (V{"1000:300/0/0@1", "3000:310/0/0@3"}));
  EXPECT_EQ(r.points("s3.5", 2), (V{"1000:130/0/0@1", "3000:125/0/0@3"}));
  EXPECT_EQ(r.points("s4.5", 1), (V{"2000:500/0/0@2"}));
  EXPECT_EQ(r.points("s4.5", 2), (V{"2000:110/0/0@2", "3000:111/0/0@3"}));
}

// A ladder that moves to new rungs, back to rungs it had left (a layout
// new to the market, with a line it had: its outcomes are searched for,
// not made again) and back to an earlier layout: each outcome keeps one
// series, and its points are the quotes of the records that listed it.
TEST(HistoryPoints, ALadderGoingBackToItsRungsKeepsOneSeriesPerOutcome) {
  Rig r;
  r.feed({market(1000, kId, 1, {{"s2.5", 0, {{1, 150, 0}, {2, 250, 0}}}, {"s3.5", 0, {{1, 300, 0}, {2, 130, 0}}}}),
          market(2000, kId, 1, {{"s4.5", 0, {{1, 500, 0}, {2, 110, 0}}}, {"s5.5", 0, {{1, 600, 0}, {2, 105, 0}}}}),
          market(3000, kId, 1, {{"s2.5", 0, {{1, 150, 0}, {2, 240, 0}}}, {"s4.5", 0, {{1, 500, 0}, {2, 112, 0}}}}),
          market(4000, kId, 1, {{"s2.5", 0, {{1, 155, 0}, {2, 240, 0}}}, {"s3.5", 0, {{1, 300, 0}, {2, 130, 0}}}}),
          market(5000, kId, 1, {{"s4.5", 0, {{1, 501, 0}, {2, 112, 0}}}, {"s5.5", 0, {{1, 600, 0}, {2, 104, 0}}}})});
  EXPECT_EQ(r.points("s2.5", 1),
            (V{"1000:150/0/0@1", "2000:null@2", "3000:150/0/0@3", "4000:155/0/0@4", "5000:null@5"}));
  EXPECT_EQ(r.points("s2.5", 2), (V{"1000:250/0/0@1", "2000:null@2", "3000:240/0/0@3", "5000:null@5"}));
  EXPECT_EQ(r.points("s3.5", 2), (V{"1000:130/0/0@1", "2000:null@2", "4000:130/0/0@4", "5000:null@5"}));
  EXPECT_EQ(r.points("s4.5", 1), (V{"2000:500/0/0@2", "4000:null@4", "5000:501/0/0@5"}));
  EXPECT_EQ(r.points("s4.5", 2), (V{"2000:110/0/0@2", "3000:112/0/0@3", "4000:null@4", "5000:112/0/0@5"}));
  EXPECT_EQ(r.points("s5.5", 2), (V{"2000:105/0/0@2", "3000:null@3", "5000:104/0/0@5"}));
  r.store.read(number_of(kId), [&](const EventHistory* h, const HeldState&) {
    ASSERT_TRUE(h);
    EXPECT_EQ(h->outcomes().size(), 8u);  // 4 lines x 2 outcomes, each once
  });
}

// The store's layouts are found by a hash of a few of a record's words;
// layouts under one hash are told apart by their bytes. With every hash
// the same (mask 0), each layout is still its own, and the points of a
// simulator feed are those made with the hash.
TEST(HistoryLayouts, LayoutsOfOneHashAreNotMerged) {
  LayoutTable one(0);
  const auto rec = [](std::vector<L> lines) { return std::get<feed::MarketRec>(market(1, kId, 1, lines).body); };
  const feed::MarketRec a = rec({{"s2.5", 0, {{1, 1, 0}, {2, 1, 0}}}});
  const feed::MarketRec b = rec({{"s3.5", 0, {{1, 1, 0}, {2, 1, 0}}}});
  const feed::MarketRec c = rec({{"s2.5", 0, {{1, 1, 0}, {3, 1, 0}}}});
  const feed::MarketRec d = rec({{"s2.5", 0, {{1, 1, 0}, {2, 1, 0}}}, {"s3.5", 0, {}}});
  const uint32_t ia = one.intern(a), ib = one.intern(b), ic = one.intern(c), id = one.intern(d);
  EXPECT_EQ(one.size(), 4u);
  EXPECT_EQ(std::set<uint32_t>({ia, ib, ic, id}).size(), 4u);
  EXPECT_EQ(one.intern(b), ib);
  EXPECT_EQ(one.intern(a), ia);
  EXPECT_EQ(one.intern(d), id);
  EXPECT_TRUE(one.same(ic, c));
  EXPECT_FALSE(one.same(ic, a));
  EXPECT_EQ(one.layout(id), (MarketLayout{{LineKey("s2.5"), {1, 2}}, {LineKey("s3.5"), {}}}));
  std::vector<uint32_t> lines;
  one.line_ids(id, lines);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(one.line(lines[0]), LineKey("s2.5"));
  EXPECT_EQ(one.line(lines[1]), LineKey("s3.5"));

  // Every point of every outcome of a simulator feed, by event.
  const auto points = [](LayoutTable& table) {
    std::map<uint64_t, EventHistory> events;
    uint64_t seq = 0;
    for (const feed::Record& r : test::sim_records(3000)) {
      ++seq;
      if (r.op() != feed::Op::Market) continue;
      auto it = events.try_emplace(r.number, r.id, &table).first;
      it->second.on_market(std::get<feed::MarketRec>(r.body), r.at, seq);
    }
    std::vector<std::string> out;
    for (const auto& [number, h] : events)
      for (const OutcomeHistory& o : h.outcomes()) {
        std::string s = std::to_string(number) + " " + std::to_string(o.key.market) + " " +
                        std::string(o.key.line.view()) + " " + std::to_string(o.key.outcome) + ":";
        for (const Point& p : h.points_of(o)) s += " " + Rig::str(p);
        out.push_back(std::move(s));
      }
    return out;
  };
  LayoutTable hashed, collided(0);
  const std::vector<std::string> want = points(hashed);
  EXPECT_GT(want.size(), 100u);
  EXPECT_EQ(points(collided), want);
  EXPECT_EQ(collided.size(), hashed.size());
}

TEST(HistoryPoints, BatchingChangesNoPoint) {
  auto recs = test::sim_records(3000);
  Rig one, each;
  one.feed(recs, true);
  each.feed(recs, false);
  HeldState a = one.store.state(), b = each.store.state();
  EXPECT_GT(a.points, 1000u);
  EXPECT_EQ(a.points, b.points);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.bytes, b.bytes);
}

// Random points of three outcomes of one market log: decoded back exactly,
// per outcome and all at once; cut in the middle, the rest decodes the same
// and the writer goes on from the right state.
TEST(HistoryEncoding, RoundTripAndCut) {
  std::mt19937_64 rng(7);
  MarketLog log(1);
  std::vector<QuoteTail> tails(3);
  for (int n = 0; n < 3; ++n) log.add_outcome();
  std::vector<std::vector<Point>> in(3);
  std::vector<uint64_t> entry_seqs;
  int64_t ts = 1'767'225'600'000;
  uint64_t seq = 1;
  auto entry = [&](bool last) {
    ts += static_cast<int64_t>(rng() % 20'000) - 2'000;  // sometimes back in time
    seq += 1 + rng() % 5000;
    log.begin(seq, ts, nullptr);
    entry_seqs.push_back(seq);
    for (uint32_t n = 0; n < 3; ++n) {
      if (!last && rng() % 3 == 0) continue;  // this outcome did not move
      Point p{ts, seq, 0, 0, 0, rng() % 10 != 0};
      if (p.priced) {
        p.price = static_cast<int32_t>(rng() % 100'000);
        p.flags = rng() % 4 == 0 ? static_cast<uint32_t>(rng()) : 0;
        p.s = static_cast<uint8_t>(rng() % 2);
      }
      log.put(n, tails[n], p.priced, p.price, p.flags, p.s);
      in[n].push_back(p);
    }
    log.end();
  };
  for (int i = 0; i < 3000; ++i) entry(false);
  size_t total = 0;
  for (uint32_t n = 0; n < 3; ++n) {
    const std::vector<Point> out = log.points_of(n);
    ASSERT_EQ(out.size(), in[n].size());
    for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(Rig::str(out[i]), Rig::str(in[n][i])) << n << " " << i;
    total += out.size();
  }
  // Random flags and wide deltas: still well under a Point's 32.
  EXPECT_LT(log.bytes(), total * 12);
  const uint64_t cut = entry_seqs[1234];
  std::vector<uint32_t> remaining;
  uint64_t dropped = 0;
  EXPECT_GT(log.cut_before(cut, remaining, dropped), 0);
  size_t kept = 0;
  for (uint32_t n = 0; n < 3; ++n) {
    std::vector<Point> want;
    for (const Point& p : in[n])
      if (p.seq >= cut) want.push_back(p);
    const std::vector<Point> out = log.points_of(n);
    ASSERT_EQ(out.size(), want.size());
    EXPECT_EQ(remaining[n], want.size());
    for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(Rig::str(out[i]), Rig::str(want[i])) << n << " " << i;
    kept += want.size();
  }
  EXPECT_EQ(dropped + kept, total);
  // The state before the cut survives it: the book at the cut's entry.
  std::vector<OutcomeState> states;
  ASSERT_TRUE(log.at_or_before(cut - 1, &states));
  entry(true);  // writing after a cut continues from the right state
  for (uint32_t n = 0; n < 3; ++n) EXPECT_EQ(Rig::str(log.points_of(n).back()), Rig::str(in[n].back()));
}

TEST(HistoryEncoding, SimulatorPointsTakeAtMostEightBytes) {
  Rig r;
  auto recs = test::sim_records(40000);
  std::set<uint64_t> numbers;
  for (const auto& rec : recs) numbers.insert(rec.number);
  r.feed(std::move(recs), true);
  HeldState st = r.store.state();
  uint64_t series_bytes = 0, outcomes = 0;
  for (uint64_t n : numbers)
    r.store.read(n, [&](const EventHistory* h, const HeldState&) {
      if (!h) return;
      for (const MarketLog& m : h->markets()) series_bytes += m.log_bytes();
      outcomes += h->outcomes().size();
    });
  ASSERT_GT(st.points, 0u);
  const double encoded = static_cast<double>(series_bytes) / static_cast<double>(st.points);
  const double held = static_cast<double>(st.bytes) / static_cast<double>(st.points);
  std::printf(
      "history: %llu points of %llu outcomes; %.2f bytes a point encoded, %.2f with every overhead "
      "(%zu bytes an outcome)\n",
      static_cast<unsigned long long>(st.points), static_cast<unsigned long long>(outcomes), encoded, held,
      EventHistory::kOutcomeBytes);
  EXPECT_LE(encoded, 4.0);  // a record's points share its seq and time
  // Issue 39's bound on everything held: an outcome's 16 bytes by number in
  // its market and line keys and layouts once for the store (it was 12-14
  // with an object, a sorted entry and a name per outcome).
  EXPECT_LE(held, 8.0);
}

TEST(HistoryCandles, BucketsAlignedOnlyPricedPointsCounted) {
  std::vector<Point> pts = {{1000, 1, 150, 0, 0, true}, {1500, 2, 170, 0, 0, true}, {1700, 3, 0, 0, 0, false},
                            {1999, 4, 140, 0, 0, true}, {2000, 5, 160, 4, 0, true}, {9000, 6, 0, 0, 0, false},
                            {10500, 7, 155, 0, 0, true}};
  std::vector<Candle> c;
  add_candles(pts, 1000, c);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ((std::vector<int64_t>{c[0].t0, c[0].open, c[0].high, c[0].low, c[0].close, c[0].n}),
            (std::vector<int64_t>{1000, 150, 170, 140, 140, 3}));
  EXPECT_EQ((std::vector<int64_t>{c[1].t0, c[1].open, c[1].close, c[1].n}), (std::vector<int64_t>{2000, 160, 160, 1}));
  EXPECT_EQ(c[2].t0, 10000);
  c.clear();
  add_candles(pts, 10'000, c);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].n, 4u);
  EXPECT_EQ(c[0].close, 160);
  EXPECT_EQ(*interval_ms("15m"), 900'000);
  EXPECT_EQ(*interval_ms("raw"), 0);
  EXPECT_FALSE(interval_ms("2m"));
}

TEST(HistoryBound, OldestPointsGoFirstAndTheBoundHolds) {
  auto recs = test::sim_records(20000);
  Rig full;
  full.feed(recs, true);
  // Room for the book (each outcome in it stays) and a third of the points.
  const size_t bound = full.store.state().bytes * 3 / 4;
  Rig r(bound);
  r.feed(recs);
  HeldState st = r.store.state();
  EXPECT_LE(st.bytes, bound);
  EXPECT_GT(st.held_from, 0);
  // What is held is exactly the tail of the unbounded history: every point
  // from the first one still held on.
  uint64_t held = 0, tail = 0, from_cut = 0;
  int64_t oldest = INT64_MAX;
  uint64_t first_seq = UINT64_MAX;
  std::set<uint64_t> numbers;
  for (const auto& rec : recs) numbers.insert(rec.number);
  for (uint64_t n : numbers)
    r.store.read(n, [&](const EventHistory* h, const HeldState&) {
      if (!h) return;
      for (const OutcomeHistory& o : h->outcomes())
        for (const Point& p : h->points_of(o)) {
          ++held;
          oldest = std::min(oldest, p.ts);
          first_seq = std::min(first_seq, p.seq);
        }
    });
  for (uint64_t n : numbers)
    full.store.read(n, [&](const EventHistory* h, const HeldState&) {
      if (!h) return;
      for (const OutcomeHistory& o : h->outcomes())
        for (const Point& p : h->points_of(o)) {
          tail += p.seq >= first_seq;
          from_cut += p.seq >= st.held_from_seq;
        }
    });
  EXPECT_EQ(st.held_from, oldest);
  // held_from_seq is the cut: every point of the whole history from it on is held.
  EXPECT_GT(st.held_from_seq, 1u);
  EXPECT_LE(st.held_from_seq, first_seq);
  EXPECT_EQ(held, from_cut);
  EXPECT_EQ(held, st.points);
  EXPECT_EQ(held, tail);
  EXPECT_LT(held, full.store.state().points);
}

// An open or close whose point the bound cut is kept apart (pins.h), and
// answered as before the cut: outcome 1 moves on every record, outcome 2
// never after its first; the event goes live before the first cut (its
// closes pinned by the cut) or after cuts (pinned as it goes live, from
// the log's cut base).
TEST(HistoryBound, OpensAndClosesOfCutPointsStay) {
  for (const int live_at : {100, 1500}) {
    std::vector<feed::Record> recs{test::event(500, kId, 1, false)};
    for (int i = 0; i < 2000; ++i) {
      if (i == live_at) recs.push_back(test::event(1000 + i, kId, 1, true));
      recs.push_back(market(1000 + i, kId, 1, {{"s", 0, {{1, 150 + i % 7, 0}, {2, 300, 0}}}}));
    }
    Rig r(4096);
    r.feed(recs);
    const HeldState st = r.store.state();
    ASSERT_GT(st.held_from_seq, static_cast<uint64_t>(live_at) + 10) << live_at;  // both cut
    // The records' seqs: the event is 1, then the market's from 2, the live event among them.
    const uint64_t live = static_cast<uint64_t>(live_at) + 2;
    const int last = live_at - 1;  // the market record before the live one
    const std::string close1 =
        std::to_string(1000 + last) + ":" + std::to_string(150 + last % 7) + "/0/0@" + std::to_string(live - 1);
    r.store.read(number_of(kId), [&](const EventHistory* h, const HeldState&) {
      ASSERT_TRUE(h);
      EXPECT_EQ(h->live_seq(), live);
      const auto o1 = h->find(OutcomeKey{1, LineKey("s"), 1});
      const auto o2 = h->find(OutcomeKey{1, LineKey("s"), 2});
      ASSERT_TRUE(o1 && o2);
      EXPECT_EQ(Rig::str(h->open_of(*o1)), "1000:150/0/0@2");
      EXPECT_EQ(Rig::str(h->open_of(*o2)), "1000:300/0/0@2");
      EXPECT_EQ(Rig::str(h->close_of(*o1)), close1) << live_at;
      EXPECT_EQ(Rig::str(h->close_of(*o2)), "1000:300/0/0@2") << live_at;
    });
  }
}

TEST(HistoryEviction, TheHistoryLeavesWithTheEventAtTheHorizon) {
  Rig r;
  r.engine.set_retain_ended_ms(10'000);
  const std::string other = "s7-101.5002";
  r.feed({test::event(1000, kId, 1, true), market(1000, kId, 1, {{"s", 0, {{1, 150, 0}}}}),
          test::rec("{\"at\":2000,\"op\":\"score\",\"id\":\"" + kId + "\",\"home\":1,\"away\":0,\"status\":\"ended\"}"),
          test::rec("{\"at\":3000,\"op\":\"remove\",\"id\":\"" + kId + "\"}"),
          market(11'000, other, 1, {{"s", 0, {{1, 150, 0}}}})});
  EXPECT_EQ(r.points("s", 1).size(), 2u);  // still held after its remove
  r.feed({market(13'001, other, 1, {{"s", 0, {{1, 151, 0}}}})});
  EXPECT_FALSE(r.engine.current()->events.find(number_of(kId)));
  EXPECT_TRUE(r.points("s", 1).empty());
  EXPECT_EQ(r.points("s", 1, 1, other).size(), 2u);
}

// The book at a moment (GET /v1/odds?at=): after every record of a
// simulated feed, every event's markets rebuilt from the history encode to
// the very bytes the engine's own markets do at that seq.
TEST(HistoryBookAt, EveryEventsBookAtEverySeqIsTheEnginesByteForByte) {
  auto recs = test::sim_records(4000);
  Rig r;
  uint64_t compared = 0, seq = 0;
  for (auto& rec : recs) {
    r.engine.apply(std::move(rec));
    auto b = r.engine.commit();
    if (!b) continue;
    r.store.apply(*b);
    seq = b->snapshot->seq;
    if (seq % 13 != 0) continue;  // every 13th seq: the whole book each time
    b->snapshot->events.for_each([&](const EventEntry& e) {
      auto encode = [](const MarketList& ms) {
        std::string out;
        json::StringSink sink(out);
        json::Writer w(sink);
        EventEntry tmp;
        tmp.markets = ms;
        views::write_odds(w, tmp, views::OddsForm::Get);
        return out;
      };
      r.store.read(e.number, [&](const EventHistory* h, const HeldState&) {
        const MarketList rebuilt = h ? book_at(*h, seq) : MarketList{};
        ASSERT_EQ(encode(rebuilt), encode(e.markets)) << "event " << e.number << " at seq " << seq;
        ++compared;
      });
    });
  }
  EXPECT_GT(compared, 5'000u);
}

// The feed-time index answers what a scan of every record would.
TEST(HistoryClock, SeqAtIsTheRecordBeforeTheFirstPastTheTime) {
  std::mt19937_64 rng(3);
  ClockIndex idx;
  std::vector<std::pair<int64_t, uint64_t>> recs;  // every record's (at, seq)
  int64_t at = 1'767'225'600'000;
  for (uint64_t seq = 1; seq <= 5000; ++seq) {
    at += static_cast<int64_t>(rng() % 3000) - 500;  // sometimes back in time, sometimes the same
    recs.emplace_back(at, seq);
    idx.add(at, seq);
  }
  auto naive = [&](int64_t t) {
    int64_t clock = INT64_MIN;
    for (const auto& [a, seq] : recs) {
      clock = std::max(clock, a);
      if (clock > t) return seq - 1;
    }
    return recs.back().second;
  };
  for (int i = 0; i < 3000; ++i) {
    const int64_t t = recs.front().first - 1000 + static_cast<int64_t>(rng() % 4'000'000);
    ASSERT_EQ(idx.seq_at(t, recs.back().second), naive(t)) << t;
  }
  EXPECT_EQ(idx.seq_at(recs.front().first - 1, 5000), 0u);
  EXPECT_LT(idx.bytes(), recs.size() * 5);
}

// Cut under the memory bound, the index answers as before for every time
// whose record it still holds, a time before them with a seq below the
// cut (refused as before held_from_seq), and holds fewer bytes.
TEST(HistoryClock, ACutDropsTheBlocksBeforeItsSeqAndKeepsTheAnswersAfter) {
  ClockIndex idx, whole;
  int64_t at = 1'767'225'600'000;
  for (uint64_t seq = 1; seq <= 5000; ++seq) {
    at += 1 + static_cast<int64_t>(seq % 7);
    idx.add(at, seq);
    whole.add(at, seq);
  }
  const size_t bytes = idx.bytes();
  EXPECT_EQ(idx.cut_before(0), 0u);
  const size_t freed = idx.cut_before(3000);
  EXPECT_GT(freed, 0u);
  EXPECT_EQ(idx.bytes(), bytes - freed);
  EXPECT_LT(idx.bytes(), bytes / 2);
  for (int64_t t = 1'767'225'600'000 - 10; t < at + 10; t += 3) {
    const uint64_t want = whole.seq_at(t, 5000);
    if (want >= 3000)
      ASSERT_EQ(idx.seq_at(t, 5000), want) << t;
    else
      ASSERT_LT(idx.seq_at(t, 5000), 3000u) << t;
  }
  idx.add(at + 5, 5001);  // appends go on after a cut
  EXPECT_EQ(idx.seq_at(at + 5, 5001), 5001u);
  EXPECT_EQ(idx.seq_at(at + 4, 5001), 5000u);
}

// A feed naming more distinct line keys than the history takes (2^21 since
// it began, an outcome's 21-bit line id; the store here is given 4,096 so
// that the test names 4,352 keys, not two million) does not stop the
// history thread: the store starts again from the state the batch left, as
// a reset does, and held_from_seq says from where; a batch read back from
// the files has no state, so the store stays empty until it is seeded.
TEST(HistoryBound, TooManyLineKeysStartTheHistoryAgainFromTheState) {
  constexpr size_t kLimit = 4096, kPer = 64;
  std::vector<feed::Record> recs;
  for (size_t i = 0; i * kPer < kLimit + 4 * kPer; ++i) {
    std::vector<L> lines;
    for (size_t j = 0; j < kPer; ++j) lines.push_back({"s" + std::to_string(i * kPer + j), 0, {{1, 150, 0}}});
    // Each market once with its new keys, then down to the main line: the
    // state stays small, what the history has seen does not.
    const auto m = static_cast<uint32_t>(1 + i);
    recs.push_back(market(1000 + static_cast<int64_t>(i), kId, m, lines));
    recs.push_back(market(1000 + static_cast<int64_t>(i), kId, m, {{"s", 0, {{1, 150, 0}}}}));
  }
  Rig r{size_t{1} << 34, kLimit};
  ASSERT_NO_THROW(r.feed(recs));
  const HeldState st = r.store.state();
  EXPECT_EQ(r.store.overflows(), 1u);
  EXPECT_FALSE(r.store.overflowed());
  EXPECT_EQ(st.seq, recs.size());
  EXPECT_GT(st.held_from_seq, 2 * (kLimit / kPer) - 2);  // seeded at the batch that overflowed
  EXPECT_LE(st.held_from_seq, recs.size());
  EXPECT_GT(st.points, 0u);  // the records after it made points
  // As the files give them: empty, then seeded by the restart.
  HistoryStore files{size_t{1} << 34, kLimit};
  for (size_t i = 0; i < recs.size(); ++i) files.apply(LoggedBatch{i + 1, i + 1, {recs[i]}, {}}, "");
  EXPECT_TRUE(files.overflowed());
  EXPECT_EQ(files.state().points, 0u);
  files.seed(*r.engine.current());
  EXPECT_FALSE(files.overflowed());
  EXPECT_EQ(files.state().held_from_seq, recs.size() + 1);
}

// The bound is the table's: its last key is taken, the next one throws.
TEST(HistoryBound, TheTableTakesItsBoundOfLineKeysAndNotOneMore) {
  LayoutTable table(~uint64_t{0}, 3);
  const auto key = [](const char* s) { return LineKey(s); };
  EXPECT_EQ(table.line_id(key("a")), 0u);
  EXPECT_EQ(table.line_id(key("b")), 1u);
  EXPECT_EQ(table.line_id(key("c")), 2u);
  EXPECT_EQ(table.line_id(key("a")), 0u);  // a known key past the bound is still found
  EXPECT_THROW(table.line_id(key("d")), std::length_error);
  EXPECT_EQ(LayoutTable(~uint64_t{0}, UINT32_MAX).line_id(key("a")), 0u);  // clamped to kMaxLines, not refused
}

// The recorder's thread applies what the pipeline delivers while REST-like
// readers read (under ThreadSanitizer too, in the tsan build's
// concurrency_tests): the result is the history of the same records
// applied in one batch.
TEST(HistoryRecorder, OnItsOwnThreadWithReadersItRecordsWhatABatchDoes) {
  const auto recs = test::sim_records(8000);
  std::set<uint64_t> numbers;
  for (const auto& rec : recs) numbers.insert(rec.number);
  Engine engine;
  Pipeline pipeline(engine, 64);
  HistoryStore store;
  HistoryRecorder recorder(store);
  pipeline.add_sink(&recorder);
  recorder.start();
  pipeline.start();
  std::atomic<bool> done{false};
  std::thread reader([&] {
    uint64_t seen = 0;
    while (!done.load()) {
      for (uint64_t n : numbers)
        store.read(n, [&](const EventHistory* h, const HeldState& st) {
          if (h) seen += h->points() + st.seq;
        });
    }
    EXPECT_GT(seen, 0u);
  });
  for (auto r : recs) pipeline.push(std::move(r));
  pipeline.stop();
  recorder.stop();
  done = true;
  reader.join();
  Rig one;
  one.feed(recs, true);
  const HeldState a = store.state(), b = one.store.state();
  EXPECT_EQ(a.seq, recs.size());
  EXPECT_EQ(a.points, b.points);
  EXPECT_EQ(a.bytes, b.bytes);
}

}  // namespace
}  // namespace oddsrelay::history
