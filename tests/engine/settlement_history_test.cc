// Settlement over every line an event priced (docs/settlement.md "Which
// lines"): lines withdrawn before full time settle on their own last read,
// each rule applied to them as to the lines still offered at full time.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/core/engine.h"
#include "engine/settlement/settlement.h"
#include "tests/test_util.h"

namespace oddsrelay {
namespace {

using test::L;
using R = SettleResult;

const Catalog& cat() { return *Catalog::builtin(); }
const std::string kId = "s7-1.43";

struct Got {
  R result;
  std::string reason;
  bool withdrawn;
};

class Book {
 public:
  Book() { test::apply_all(engine_, {test::event(1, kId, 1, true)}); }
  Book& market(int64_t at, uint32_t id, const std::vector<L>& lines) {
    test::apply_all(engine_, {test::market(at, kId, id, lines)});
    return *this;
  }
  Book& remove_market(int64_t at, uint32_t id) {
    return rec(R"({"at":)" + std::to_string(at) + R"(,"op":"market","id":")" + kId + R"(","market":)" +
               std::to_string(id) + R"(,"lines":{}})");
  }
  Book& score(int64_t at, const std::string& status, int h, int a, const std::string& extra = "") {
    return rec(R"({"at":)" + std::to_string(at) + R"(,"op":"score","id":")" + kId + R"(","home":)" + std::to_string(h) +
               R"(,"away":)" + std::to_string(a) + R"(,"status":")" + status + "\"" + extra + "}");
  }
  Book& rec(const std::string& line) {
    test::apply_all(engine_, {test::rec(line)});
    return *this;
  }
  Settlement settle(bool inplay = false) {
    return oddsrelay::settle(*engine_.current()->events.find(43), cat(), inplay);
  }
  // Every (market, line) the settlement lists, in order.
  std::vector<std::string> lines() {
    std::vector<std::string> out;
    for (const auto& m : settle().markets)
      for (const auto& l : m.lines) out.push_back(std::to_string(m.market) + "/" + l.key + (l.withdrawn ? " w" : ""));
    return out;
  }
  Got get(uint32_t market, const std::string& key, uint32_t outcome, bool inplay = false) {
    for (const auto& m : settle(inplay).markets)
      if (m.market == market)
        for (const auto& l : m.lines)
          if (l.key == key)
            for (const auto& o : l.outcomes)
              if (o.outcome == outcome) return {o.result, o.reason ? o.reason : "", l.withdrawn};
    ADD_FAILURE() << "no outcome " << outcome << " on " << market << "/" << key;
    return {R::Pending, "missing", false};
  }

 private:
  Engine engine_;
};

#define EXPECT_SETTLED(got, res, why, wd)   \
  do {                                      \
    Got g_ = (got);                         \
    EXPECT_EQ(g_.result, res) << g_.reason; \
    EXPECT_EQ(g_.reason, why);              \
    EXPECT_EQ(g_.withdrawn, wd);            \
  } while (0)

TEST(SettlementHistory, MarketRemovedAtKickOffSettlesFromTheFinalScore) {
  Book b;
  b.market(10, 1001, {{"s", 0, {{2001, 200, 0}, {2002, 300, 0}, {2003, 400, 0}}}})
      .market(11, 1007, {{"s2.5", 0, {{2008, 190, 0}, {2009, 190, 0}}}})
      .remove_market(20, 1001)
      .remove_market(20, 1007)
      .score(30, "live", 0, 0)
      .score(40, "ended", 2, 1);
  EXPECT_SETTLED(b.get(1001, "s", 2001), R::Win, "", true);
  EXPECT_SETTLED(b.get(1001, "s", 2002), R::Lose, "", true);
  EXPECT_SETTLED(b.get(1007, "s2.5", 2008), R::Win, "", true);
  EXPECT_SETTLED(b.get(1007, "s2.5", 2009), R::Lose, "", true);
  Settlement s = b.settle();
  EXPECT_EQ(s.covered, 5u);
  ASSERT_EQ(s.markets.size(), 2u);
  EXPECT_EQ(s.markets[0].lines[0].last_read, 10);
}

TEST(SettlementHistory, RungWithdrawnOpenSettlesWithPushesAndQuarterLines) {
  Book b;
  b.market(10, 1007,
           {{"s3", 0, {{2008, 240, 0}, {2009, 155, 0}}},
            {"s2.25", 0, {{2008, 180, 0}, {2009, 200, 0}}},
            {"s1.5", 0, {{2008, 130, 0}, {2009, 320, 0}}}})
      .market(20, 1007, {{"s1.5", 0, {{2008, 120, 0}, {2009, 350, 0}}}})
      .score(30, "ended", 2, 1);
  EXPECT_SETTLED(b.get(1007, "s1.5", 2008), R::Win, "", false);
  EXPECT_SETTLED(b.get(1007, "s3", 2008), R::Void, reason::kPush, true);            // rule 4
  EXPECT_SETTLED(b.get(1007, "s2.25", 2009), R::Void, reason::kQuarterLine, true);  // rule 6
}

TEST(SettlementHistory, RungWithdrawnSuspendedIsVoid) {
  Book b;
  b.market(10, 1007, {{"s0.5", 0, {{2008, 110, 0}, {2009, 600, 0}}}, {"s1.5", 0, {{2008, 140, 0}, {2009, 280, 0}}}})
      .score(15, "live", 1, 0)
      // The goal suspends the ladder, then 0.5 is taken off while suspended.
      .market(16, 1007, {{"s0.5", 1, {{2008, 110, 0}, {2009, 600, 0}}}, {"s1.5", 1, {{2008, 140, 0}, {2009, 280, 0}}}})
      .market(20, 1007, {{"s1.5", 0, {{2008, 130, 0}, {2009, 300, 0}}}})
      .score(30, "ended", 1, 0);
  EXPECT_SETTLED(b.get(1007, "s0.5", 2008), R::Void, reason::kSuspended, true);  // rule 7 on its own read
  EXPECT_SETTLED(b.get(1007, "s0.5", 2009), R::Void, reason::kSuspended, true);
  EXPECT_SETTLED(b.get(1007, "s1.5", 2009), R::Win, "", false);  // reopened: settles normally
}

TEST(SettlementHistory, OutcomeFlaggedAtItsLastReadIsVoidTheOtherSettles) {
  Book b;
  b.market(10, 1005, {{"s-0.5", 0, {{2006, 190, 4}, {2007, 190, 0}}}, {"s-1.5", 0, {{2006, 300, 0}, {2007, 130, 0}}}})
      .market(20, 1005, {{"s-1.5", 0, {{2006, 300, 0}, {2007, 130, 0}}}})
      .score(30, "ended", 2, 1);
  EXPECT_SETTLED(b.get(1005, "s-0.5", 2006), R::Void, reason::kSuspended, true);
  EXPECT_SETTLED(b.get(1005, "s-0.5", 2007), R::Lose, "", true);
}

TEST(SettlementHistory, EveryLineOnceWithdrawnAfterCurrent) {
  Book b;
  b.market(10, 1007, {{"s1.5", 0, {{2008, 130, 0}}}, {"s2.5", 0, {{2008, 190, 0}}}})
      .market(12, 1019, {{"s", 0, {{2018, 180, 0}, {2019, 200, 0}}}})
      .market(20, 1007, {{"s2.5", 0, {{2008, 185, 0}}}, {"s3.5", 0, {{2008, 300, 0}}}})
      .market(21, 1007, {{"s3.5", 0, {{2008, 280, 0}}}, {"s1.5", 0, {{2008, 135, 0}}}})  // 1.5 back, 2.5 gone
      .remove_market(22, 1019)
      .score(30, "ended", 0, 0);
  EXPECT_EQ(b.lines(), (std::vector<std::string>{"1007/s3.5", "1007/s1.5", "1007/s2.5 w", "1019/s w"}));
  EXPECT_SETTLED(b.get(1019, "s", 2019), R::Win, "", true);
}

TEST(SettlementHistory, CorrectScoreOtherCountsWithdrawnScorelines) {
  Book b;
  b.market(10, 1004, {{"s0:0", 0, {{2004, 900, 0}}}, {"s1:0", 0, {{2004, 700, 0}}}, {"s", 0, {{2005, 400, 0}}}})
      .score(15, "live", 1, 0)
      .market(16, 1004, {{"s1:0", 0, {{2004, 300, 0}}}, {"s", 0, {{2005, 300, 0}}}})  // 0:0 is gone
      .score(30, "ended", 0, 0);                                                      // VAR took the goal back
  EXPECT_SETTLED(b.get(1004, "s0:0", 2004), R::Win, "", true);
  EXPECT_SETTLED(b.get(1004, "s", 2005), R::Lose, "", false);  // 0:0 was listed: Other loses
}

TEST(SettlementHistory, AbandonedAndNoScoreApplyToWithdrawnLines) {
  Book a;
  a.market(10, 1001, {{"s", 0, {{2001, 200, 0}}}})
      .remove_market(20, 1001)
      .score(30, "ended", 1, 0, R"(,"result":"abandoned")");
  EXPECT_SETTLED(a.get(1001, "s", 2001), R::Void, reason::kAbandoned, true);  // rule 8
  Book n;
  n.market(10, 1001, {{"s", 0, {{2001, 200, 0}}}})
      .remove_market(20, 1001)
      .rec(R"({"at":30,"op":"score","id":")" + kId + R"(","status":"ended"})");
  EXPECT_SETTLED(n.get(1001, "s", 2001), R::Void, reason::kNoScore, true);  // rule 3
}

TEST(SettlementHistory, V1PendingMarketsStayPendingWhenWithdrawn) {
  Book b;
  b.market(10, 1054, {{"s-0.5", 0, {{2020, 190, 0}}}}).remove_market(20, 1054).score(30, "ended", 1, 0);
  EXPECT_SETTLED(b.get(1054, "s-0.5", 2020), R::Pending, reason::kHalfTime, true);
}

TEST(SettlementHistory, WithdrawnLinesArePendingUntilFullTimeAndSettleInPlayWhenDecided) {
  Book b;
  b.market(10, 1007, {{"s0.5", 0, {{2008, 110, 0}, {2009, 600, 0}}}, {"s2.5", 0, {{2008, 190, 0}, {2009, 190, 0}}}})
      .market(20, 1007, {{"s2.5", 0, {{2008, 150, 0}, {2009, 240, 0}}}})
      .score(30, "live", 1, 0);
  EXPECT_SETTLED(b.get(1007, "s0.5", 2008), R::Pending, reason::kNotEnded, true);
  EXPECT_SETTLED(b.get(1007, "s0.5", 2008, true), R::Win, "", true);
  EXPECT_SETTLED(b.get(1007, "s0.5", 2009, true), R::Lose, "", true);
}

TEST(SettlementHistory, CorrectionReRunsWithdrawnLinesAndCountsRevisions) {
  Book b;
  b.market(10, 1001, {{"s", 0, {{2001, 200, 0}, {2002, 300, 0}, {2003, 400, 0}}}}).remove_market(20, 1001);
  EXPECT_EQ(b.settle().final_version, 0u);
  b.score(30, "ended", 1, 0);
  EXPECT_EQ(b.settle().final_version, 1u);
  EXPECT_SETTLED(b.get(1001, "s", 2001), R::Win, "", true);
  b.score(40, "ended", 1, 1);  // rule 9
  EXPECT_EQ(b.settle().final_version, 2u);
  EXPECT_SETTLED(b.get(1001, "s", 2001), R::Lose, "", true);
  EXPECT_SETTLED(b.get(1001, "s", 2002), R::Win, "", true);
}

TEST(SettlementHistory, LinesPricedOnlyAfterFullTimeAreNotSettled) {
  Book b;
  b.market(10, 1001, {{"s", 0, {{2001, 200, 0}}}})
      .score(20, "ended", 1, 0)
      .market(30, 1019, {{"s", 0, {{2018, 180, 0}}}});
  EXPECT_EQ(b.lines(), (std::vector<std::string>{"1001/s"}));
}

}  // namespace
}  // namespace oddsrelay
