#include "engine/sources/simulator.h"

#include <gtest/gtest.h>

#include <set>

#include "engine/core/engine.h"
#include "engine/sources/sim_catalog.h"
#include "protocol/event_id.h"
#include "protocol/feed_writer.h"

namespace oddsrelay::sim {

namespace {

std::vector<feed::Record> run(const SimOptions& o, int steps) {
  Simulator s(o);
  std::vector<feed::Record> out;
  s.open(1'767'225'600'000, 1'767'225'600'000, out);
  for (int i = 0; i < steps; ++i) s.step(s.now(), out);
  return out;
}

std::string encode(const std::vector<feed::Record>& recs) {
  std::string out;
  for (const auto& r : recs) {
    feed::write_record(r, out);
    out += '\n';
  }
  return out;
}

}  // namespace

TEST(Simulator, SameSeedSameFeed) {
  SimOptions o{42, 100, 500, 500};
  EXPECT_EQ(encode(run(o, 5000)), encode(run(o, 5000)));
  SimOptions other = o;
  other.seed = 43;
  EXPECT_NE(encode(run(o, 500)), encode(run(other, 500)));
}

TEST(Simulator, CoversSportsMarketsAndTheMatchLifecycle) {
  // minute=50 ms: a soccer match lasts 4.5 s of virtual time.
  auto recs = run(SimOptions{1, 400, 1000, 50}, 120'000);
  std::set<int32_t> sports;
  std::set<uint32_t> markets;
  std::set<feed::MatchResult> results;
  bool postponed = false, suspended_line = false, removed_market = false, live_score = false, stats = false;
  size_t removes = 0;
  for (const auto& r : recs) {
    ASSERT_TRUE(parse_event_id(r.id).ok()) << r.id;
    ASSERT_EQ(parse_event_id(r.id).number, r.number);
    switch (r.op()) {
      case feed::Op::Event:
        sports.insert(std::get<std::shared_ptr<const feed::EventObject>>(r.body)->sport);
        break;
      case feed::Op::Market: {
        const auto& m = std::get<feed::MarketRec>(r.body);
        markets.insert(m.market);
        if (m.lines.empty()) removed_market = true;
        for (const auto& l : m.lines) suspended_line |= l.suspended != 0;
        for (const auto& o : m.outcomes) {
          EXPECT_GE(o.price, 101);
          EXPECT_LE(o.price, 100000);
        }
        break;
      }
      case feed::Op::Score: {
        const auto& s = r.score();
        postponed |= s.postponed;
        if (s.status == feed::ScoreStatus::Live && s.home && *s.home + *s.away > 0) live_score = true;
        if (s.status == feed::ScoreStatus::Ended) results.insert(s.result);
        break;
      }
      case feed::Op::Stats:
        stats = true;
        break;
      case feed::Op::Remove:
        ++removes;
        break;
    }
  }
  EXPECT_GE(sports.size(), 20u);
  for (uint32_t id : {1001u, 1004u, 1005u, 1007u, 1009u, 1011u, 1012u, 1018u, 1019u, 1054u, 1080u, 1128u})
    EXPECT_TRUE(markets.count(id)) << id;
  EXPECT_TRUE(results.count(feed::MatchResult::Completed));
  EXPECT_TRUE(results.count(feed::MatchResult::Abandoned));
  EXPECT_TRUE(postponed);
  EXPECT_TRUE(suspended_line);
  EXPECT_TRUE(removed_market);  // first-half markets go at half time
  EXPECT_TRUE(live_score);
  EXPECT_TRUE(stats);
  EXPECT_GT(removes, 0u);
}

TEST(Simulator, KeepsTheEventCountAndAMixOfLiveAndPrematch) {
  Simulator s(SimOptions{9, 300, 1000, 100});
  std::vector<feed::Record> out;
  s.open(1'767'225'600'000, 1'767'225'600'000, out);
  Engine e;
  for (int i = 0; i < 100'000; ++i) {
    for (auto& r : out) e.apply(std::move(r));
    out.clear();
    if (i % 256 == 0) e.commit();
    s.step(s.now(), out);
  }
  e.commit();
  auto snap = e.current();
  EXPECT_GT(snap->listed_live, 30u);
  EXPECT_GT(snap->listed_prematch, 30u);
  EXPECT_LE(snap->listed_live + snap->listed_prematch, 300u);
  EXPECT_GE(snap->listed_live + snap->listed_prematch, 250u);  // a few are between full time and removal
}

TEST(Simulator, OneOddsRecordPerStepAtTheGivenRate) {
  Simulator s(SimOptions{1, 50, 250, 4000});
  std::vector<feed::Record> out;
  s.open(0, 0, out);
  EXPECT_DOUBLE_EQ(s.step_ms(), 4.0);
  out.clear();
  s.step(4, out);
  size_t markets = 0;
  for (const auto& r : out) markets += r.op() == feed::Op::Market;
  EXPECT_GE(markets, 1u);
  EXPECT_EQ(s.now(), 4);
}

}  // namespace oddsrelay::sim
