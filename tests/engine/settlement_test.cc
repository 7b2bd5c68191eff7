// Settlement V1, rule by rule and market family by family (docs/settlement.md):
// each case builds one event in a real engine, ends it with a score, and
// checks one outcome's result and reason.
#include "engine/settlement/settlement.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "engine/core/engine.h"
#include "tests/test_util.h"

namespace oddsrelay {
namespace {

using test::L;
using R = SettleResult;

const Catalog& cat() { return *Catalog::builtin(); }

// A soccer full-time market of `kind` (and team) from the built-in catalog.
uint32_t market_of(const std::string& kind, const std::string& team = "") {
  for (const auto& m : cat().markets())
    if (m.in_sport(1) && m.kind == kind && m.period == "ft" && m.team == team && m.stat == "goals") return m.id;
  ADD_FAILURE() << "no soccer market of kind " << kind;
  return 0;
}

// The outcome id of `market` whose English name is `name`.
uint32_t outcome_of(uint32_t market, const std::string& name) {
  for (uint32_t o : cat().market(market)->outcomes)
    if (cat().outcome_name(o, 0) == name) return o;
  ADD_FAILURE() << "market " << market << " has no outcome " << name;
  return 0;
}

struct Got {
  R result;
  std::string reason;
};

// One event with one market (given lines), then the score records.
class Scenario {
 public:
  Scenario(uint32_t market, const std::vector<L>& lines) : market_(market) {
    test::apply_all(engine_, {test::event(1000, "s7-1.77", 1, true), test::market(1001, "s7-1.77", market, lines)});
  }
  Scenario& score(const std::string& status, int h, int a, const std::string& extra = "", int64_t at = 2000) {
    std::string line = R"({"at":)" + std::to_string(at) + R"(,"op":"score","id":"s7-1.77","home":)" +
                       std::to_string(h) + R"(,"away":)" + std::to_string(a) + R"(,"status":")" + status + "\"" +
                       extra + "}";
    test::apply_all(engine_, {test::rec(line)});
    return *this;
  }
  Scenario& no_score_end() {
    test::apply_all(engine_, {test::rec(R"({"at":3000,"op":"score","id":"s7-1.77","status":"ended"})")});
    return *this;
  }
  Settlement settle(bool inplay = false) {
    return oddsrelay::settle(*engine_.current()->events.find(77), cat(), inplay);
  }
  Got get(const std::string& key, uint32_t outcome, bool inplay = false) {
    Settlement s = settle(inplay);
    for (const auto& m : s.markets)
      if (m.market == market_)
        for (const auto& l : m.lines)
          if (l.key == key)
            for (const auto& o : l.outcomes)
              if (o.outcome == outcome) return {o.result, o.reason ? o.reason : ""};
    ADD_FAILURE() << "no outcome " << outcome << " on line " << key;
    return {R::Pending, "missing"};
  }

 private:
  Engine engine_;
  uint32_t market_;
};

#define EXPECT_RESULT(got, res, why)        \
  do {                                      \
    Got g_ = (got);                         \
    EXPECT_EQ(g_.result, res) << g_.reason; \
    EXPECT_EQ(g_.reason, why);              \
  } while (0)

TEST(Settlement, MatchWinner1x2) {
  for (auto [h, a, win] : {std::tuple{2, 1, 2001u}, {1, 1, 2002u}, {0, 3, 2003u}}) {
    Scenario s(1001, {{"s", 0, {{2001, 200, 0}, {2002, 300, 0}, {2003, 400, 0}}}});
    s.score("ended", h, a);
    for (uint32_t o : {2001u, 2002u, 2003u}) EXPECT_RESULT(s.get("s", o), o == win ? R::Win : R::Lose, "");
  }
}

TEST(Settlement, DoubleChance) {
  uint32_t m = market_of("double_chance");
  Scenario s(
      m,
      {{"s",
        0,
        {{(int)outcome_of(m, "1X"), 120, 0}, {(int)outcome_of(m, "12"), 130, 0}, {(int)outcome_of(m, "X2"), 140, 0}}}});
  s.score("ended", 1, 1);
  EXPECT_RESULT(s.get("s", outcome_of(m, "1X")), R::Win, "");
  EXPECT_RESULT(s.get("s", outcome_of(m, "12")), R::Lose, "");
  EXPECT_RESULT(s.get("s", outcome_of(m, "X2")), R::Win, "");
}

TEST(Settlement, DrawNoBetDrawVoidsBothSides) {
  Scenario d(1009, {{"s", 0, {{2010, 150, 0}, {2011, 250, 0}}}});
  d.score("ended", 0, 0);
  EXPECT_RESULT(d.get("s", 2010), R::Void, reason::kPush);
  EXPECT_RESULT(d.get("s", 2011), R::Void, reason::kPush);
  Scenario w(1009, {{"s", 0, {{2010, 150, 0}, {2011, 250, 0}}}});
  w.score("ended", 0, 1);
  EXPECT_RESULT(w.get("s", 2010), R::Lose, "");
  EXPECT_RESULT(w.get("s", 2011), R::Win, "");
}

TEST(Settlement, TotalsHalfWholeAndQuarterLines) {
  Scenario s(1007, {{"s2.5", 0, {{2008, 190, 0}, {2009, 190, 0}}},
                    {"s3", 0, {{2008, 220, 0}, {2009, 160, 0}}},
                    {"s2", 0, {{2008, 150, 0}, {2009, 250, 0}}},
                    {"s2.25", 0, {{2008, 170, 0}, {2009, 210, 0}}}});
  s.score("ended", 2, 1);
  EXPECT_RESULT(s.get("s2.5", 2008), R::Win, "");
  EXPECT_RESULT(s.get("s2.5", 2009), R::Lose, "");
  EXPECT_RESULT(s.get("s3", 2008), R::Void, reason::kPush);  // rule 4: on the line
  EXPECT_RESULT(s.get("s3", 2009), R::Void, reason::kPush);
  EXPECT_RESULT(s.get("s2", 2008), R::Win, "");
  EXPECT_RESULT(s.get("s2", 2009), R::Lose, "");
  EXPECT_RESULT(s.get("s2.25", 2008), R::Void, reason::kQuarterLine);
}

TEST(Settlement, ZeroZero) {
  Scenario s(1007, {{"s0.5", 0, {{2008, 110, 0}, {2009, 600, 0}}}});
  s.score("ended", 0, 0);
  EXPECT_RESULT(s.get("s0.5", 2008), R::Lose, "");
  EXPECT_RESULT(s.get("s0.5", 2009), R::Win, "");
}

TEST(Settlement, AsianHandicapSignsWholeHalfQuarter) {
  Scenario s(1005, {{"s-0.5", 0, {{2006, 190, 0}, {2007, 190, 0}}},
                    {"s-1", 0, {{2006, 250, 0}, {2007, 150, 0}}},
                    {"s+1.5", 0, {{2006, 120, 0}, {2007, 400, 0}}},
                    {"s0", 0, {{2006, 180, 0}, {2007, 200, 0}}},
                    {"s-0.75", 0, {{2006, 210, 0}, {2007, 170, 0}}}});
  s.score("ended", 2, 1);
  EXPECT_RESULT(s.get("s-0.5", 2006), R::Win, "");
  EXPECT_RESULT(s.get("s-0.5", 2007), R::Lose, "");
  EXPECT_RESULT(s.get("s-1", 2006), R::Void, reason::kPush);  // whole line, adjusted tie
  EXPECT_RESULT(s.get("s-1", 2007), R::Void, reason::kPush);
  EXPECT_RESULT(s.get("s+1.5", 2006), R::Win, "");
  EXPECT_RESULT(s.get("s0", 2007), R::Lose, "");
  EXPECT_RESULT(s.get("s-0.75", 2006), R::Void, reason::kQuarterLine);  // rule 6
  EXPECT_RESULT(s.get("s-0.75", 2007), R::Void, reason::kQuarterLine);
}

TEST(Settlement, EuropeanHandicapTieVoidsSidesDrawWins) {
  uint32_t m = market_of("handicap_european");
  Scenario s(m, {{"s-1",
                  0,
                  {{(int)outcome_of(m, "Home"), 300, 0},
                   {(int)outcome_of(m, "Draw"), 350, 0},
                   {(int)outcome_of(m, "Away"), 200, 0}}},
                 {"s1",
                  0,
                  {{(int)outcome_of(m, "Home"), 130, 0},
                   {(int)outcome_of(m, "Draw"), 500, 0},
                   {(int)outcome_of(m, "Away"), 700, 0}}}});
  s.score("ended", 2, 1);
  EXPECT_RESULT(s.get("s-1", outcome_of(m, "Home")), R::Void, reason::kPush);  // rule 5
  EXPECT_RESULT(s.get("s-1", outcome_of(m, "Away")), R::Void, reason::kPush);
  EXPECT_RESULT(s.get("s-1", outcome_of(m, "Draw")), R::Win, "");
  EXPECT_RESULT(s.get("s1", outcome_of(m, "Home")), R::Win, "");
  EXPECT_RESULT(s.get("s1", outcome_of(m, "Draw")), R::Lose, "");
}

TEST(Settlement, CorrectScoreAndOther) {
  std::vector<L> lines = {{"s1:0", 0, {{2004, 700, 0}}}, {"s2:1", 0, {{2004, 900, 0}}}, {"s", 0, {{2005, 400, 0}}}};
  Scenario hit(1004, lines);
  hit.score("ended", 2, 1);
  EXPECT_RESULT(hit.get("s2:1", 2004), R::Win, "");
  EXPECT_RESULT(hit.get("s1:0", 2004), R::Lose, "");
  EXPECT_RESULT(hit.get("s", 2005), R::Lose, "");
  Scenario beyond(1004, lines);  // a scoreline beyond the grid: "other" wins
  beyond.score("ended", 5, 4);
  EXPECT_RESULT(beyond.get("s", 2005), R::Win, "");
  EXPECT_RESULT(beyond.get("s2:1", 2004), R::Lose, "");
}

TEST(Settlement, BttsOddEvenExactBands) {
  Scenario b(1019, {{"s", 0, {{2018, 180, 0}, {2019, 200, 0}}}});
  b.score("ended", 1, 0);
  EXPECT_RESULT(b.get("s", 2018), R::Lose, "");
  EXPECT_RESULT(b.get("s", 2019), R::Win, "");
  uint32_t oe = market_of("odd_even");
  Scenario o(oe, {{"s", 0, {{(int)outcome_of(oe, "Odd"), 190, 0}, {(int)outcome_of(oe, "Even"), 190, 0}}}});
  o.score("ended", 2, 1);
  EXPECT_RESULT(o.get("s", outcome_of(oe, "Odd")), R::Win, "");
  uint32_t ex = market_of("exact_goals");
  Scenario e(ex, {{"s", 0, {{(int)outcome_of(ex, "3"), 400, 0}, {(int)outcome_of(ex, "6+"), 2000, 0}}}});
  e.score("ended", 5, 2);
  EXPECT_RESULT(e.get("s", outcome_of(ex, "3")), R::Lose, "");
  EXPECT_RESULT(e.get("s", outcome_of(ex, "6+")), R::Win, "");
  uint32_t gb = market_of("goal_bands");
  Scenario g(gb, {{"s", 0, {{(int)outcome_of(gb, "2-3"), 200, 0}, {(int)outcome_of(gb, "0-1"), 400, 0}}}});
  g.score("ended", 2, 1);
  EXPECT_RESULT(g.get("s", outcome_of(gb, "2-3")), R::Win, "");
  EXPECT_RESULT(g.get("s", outcome_of(gb, "0-1")), R::Lose, "");
}

TEST(Settlement, TeamTotalsExactAndOddEven) {
  uint32_t tt = market_of("team_total", "away");
  Scenario t(tt, {{"s1.5", 0, {{(int)outcome_of(tt, "Over"), 300, 0}, {(int)outcome_of(tt, "Under"), 140, 0}}}});
  t.score("ended", 3, 2);
  EXPECT_RESULT(t.get("s1.5", outcome_of(tt, "Over")), R::Win, "");  // the away team's 2, not the total 5
  uint32_t te = market_of("team_exact", "home");
  Scenario e(te, {{"s", 0, {{(int)outcome_of(te, "3+"), 500, 0}, {(int)outcome_of(te, "0"), 300, 0}}}});
  e.score("ended", 3, 2);
  EXPECT_RESULT(e.get("s", outcome_of(te, "3+")), R::Win, "");
  uint32_t to = market_of("team_odd_even", "home");
  Scenario o(to, {{"s", 0, {{(int)outcome_of(to, "Even"), 190, 0}}}});
  o.score("ended", 3, 2);
  EXPECT_RESULT(o.get("s", outcome_of(to, "Even")), R::Lose, "");
}

TEST(Settlement, Combos) {
  uint32_t cb = market_of("combo_1x2_btts");
  Scenario b(cb, {{"s", 0, {{(int)outcome_of(cb, "Home & Yes"), 400, 0}, {(int)outcome_of(cb, "Home & No"), 300, 0}}}});
  b.score("ended", 2, 1);
  EXPECT_RESULT(b.get("s", outcome_of(cb, "Home & Yes")), R::Win, "");
  EXPECT_RESULT(b.get("s", outcome_of(cb, "Home & No")), R::Lose, "");
  uint32_t ct = 0;
  for (const auto& m : cat().markets())
    if (m.in_sport(1) && m.kind == "combo_1x2_total" && m.period == "ft" && m.name.en.ends_with("2.5")) ct = m.id;
  ASSERT_NE(ct, 0u);
  Scenario t(
      ct,
      {{"s",
        0,
        {{(int)outcome_of(ct, "Draw & Under & 2.5"), 500, 0}, {(int)outcome_of(ct, "Draw & Over & 2.5"), 900, 0}}}});
  t.score("ended", 1, 1);
  EXPECT_RESULT(t.get("s", outcome_of(ct, "Draw & Under & 2.5")), R::Win, "");
  EXPECT_RESULT(t.get("s", outcome_of(ct, "Draw & Over & 2.5")), R::Lose, "");
}

TEST(Settlement, FirstEndedScoreIsFinalCorrectionsRerun) {
  Scenario s(1001, {{"s", 0, {{2001, 200, 0}, {2002, 300, 0}, {2003, 400, 0}}}});
  s.score("ended", 1, 0, "", 5000);
  Settlement a = s.settle();
  EXPECT_EQ(a.settled_at, 5000);
  EXPECT_EQ(a.final_version, 1u);
  s.score("ended", 1, 0, "", 6000);  // the same score again: no change (rule 1)
  EXPECT_EQ(s.settle().settled_at, 5000);
  s.score("ended", 1, 1, "", 7000);  // a correction (rule 9)
  Settlement c = s.settle();
  EXPECT_EQ(c.settled_at, 7000);
  EXPECT_EQ(c.final_version, 2u);
  EXPECT_EQ(c.score, std::make_pair(1, 1));
  EXPECT_RESULT(s.get("s", 2002), R::Win, "");
}

TEST(Settlement, NoScoreAbandonedPostponedNotEnded) {
  Scenario none(1001, {{"s", 0, {{2001, 200, 0}}}});
  none.no_score_end();
  EXPECT_RESULT(none.get("s", 2001), R::Void, reason::kNoScore);  // rule 3
  Scenario ab(1001, {{"s", 0, {{2001, 200, 0}}}});
  ab.score("ended", 1, 0, R"(,"result":"abandoned")");
  EXPECT_RESULT(ab.get("s", 2001), R::Void, reason::kAbandoned);  // rule 8
  Scenario cx(1001, {{"s", 0, {{2001, 200, 0}}}});
  cx.score("ended", 0, 0, R"(,"result":"cancelled")");
  EXPECT_RESULT(cx.get("s", 2001), R::Void, reason::kCancelled);
  Scenario pp(1001, {{"s", 0, {{2001, 200, 0}}}});
  pp.score("scheduled", 0, 0, R"(,"postponed":true)");
  EXPECT_RESULT(pp.get("s", 2001), R::Pending, reason::kNotEnded);
  Scenario live(1001, {{"s", 0, {{2001, 200, 0}}}});
  live.score("live", 3, 0);
  EXPECT_RESULT(live.get("s", 2001), R::Pending, reason::kNotEnded);
  EXPECT_FALSE(live.settle().inplay);
}

TEST(Settlement, SuspendedOrFlaggedAtLastReadIsVoid) {
  Scenario s(1007, {{"s2.5", 1, {{2008, 190, 0}, {2009, 190, 0}}}, {"s1.5", 0, {{2008, 130, 4}, {2009, 300, 0}}}});
  s.score("ended", 3, 0);
  EXPECT_RESULT(s.get("s2.5", 2008), R::Void, reason::kSuspended);  // line s = 1
  EXPECT_RESULT(s.get("s1.5", 2008), R::Void, reason::kSuspended);  // outcome flagged
  EXPECT_RESULT(s.get("s1.5", 2009), R::Lose, "");
}

TEST(Settlement, V1PendingMarketsSayWhy) {
  Scenario c(1128, {{"s9.5", 0, {{2024, 190, 0}}}});
  c.score("ended", 1, 0);
  EXPECT_RESULT(c.get("s9.5", 2024), R::Pending, reason::kStats);
  Scenario h(1054, {{"s-0.5", 0, {{2020, 190, 0}}}});
  h.score("ended", 1, 0);
  EXPECT_RESULT(h.get("s-0.5", 2020), R::Pending, reason::kHalfTime);
  uint32_t last = market_of("last_team_to_score");
  Scenario l(last, {{"s", 0, {{(int)outcome_of(last, "Home"), 190, 0}}}});
  l.score("ended", 1, 0);
  EXPECT_RESULT(l.get("s", outcome_of(last, "Home")), R::Pending, reason::kSequence);
  Scenario u(999999, {{"s", 0, {{2001, 190, 0}}}});
  u.score("ended", 1, 0);
  EXPECT_RESULT(u.get("s", 2001), R::Pending, reason::kUnknownMarket);
}

TEST(Settlement, InPlayOnlyDecidedOutcomes) {
  Scenario t(1007, {{"s2.5", 0, {{2008, 190, 0}, {2009, 190, 0}}}, {"s4.5", 0, {{2008, 400, 0}, {2009, 120, 0}}}});
  t.score("live", 2, 1);
  EXPECT_TRUE(t.settle(true).inplay);
  EXPECT_RESULT(t.get("s2.5", 2008, true), R::Win, "");
  EXPECT_RESULT(t.get("s2.5", 2009, true), R::Lose, "");
  EXPECT_RESULT(t.get("s4.5", 2008, true), R::Pending, reason::kNotEnded);
  Scenario b(1019, {{"s", 0, {{2018, 180, 0}, {2019, 200, 0}}}});
  b.score("live", 1, 1);
  EXPECT_RESULT(b.get("s", 2018, true), R::Win, "");
  EXPECT_RESULT(b.get("s", 2019, true), R::Lose, "");
  Scenario cs(1004, {{"s1:0", 0, {{2004, 700, 0}}}, {"s2:2", 0, {{2004, 900, 0}}}, {"s", 0, {{2005, 400, 0}}}});
  cs.score("live", 2, 0);
  EXPECT_RESULT(cs.get("s1:0", 2004, true), R::Lose, "");  // passed in the home dimension
  EXPECT_RESULT(cs.get("s2:2", 2004, true), R::Pending, reason::kNotEnded);
  EXPECT_RESULT(cs.get("s", 2005, true), R::Pending, reason::kNotEnded);
  Scenario w(1001, {{"s", 0, {{2001, 110, 0}}}});
  w.score("live", 5, 0);
  EXPECT_RESULT(w.get("s", 2001, true), R::Pending, reason::kNotEnded);  // flippable until full time
}

}  // namespace
}  // namespace oddsrelay
