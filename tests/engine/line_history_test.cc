// The line history (engine/core/line_history.h): which lines an event keeps as
// withdrawn, with which read, when it stops changing, that it is copied on
// write like the rest of the state, its bound, and that the state digest
// sees it.
#include "engine/core/line_history.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/core/engine.h"
#include "engine/core/retention.h"
#include "engine/core/state_digest.h"
#include "tests/test_util.h"

namespace oddsrelay {
namespace {

using test::L;
using test::market;

const std::string kId = "s7-1.42";

const EventEntry& entry(const Engine& e) { return *e.current()->events.find(42); }

// The withdrawn lines of `market_id` as "key s=<s> <outcome>:<price>:<flags> ... ls=<ls>".
std::vector<std::string> withdrawn(const EventEntry& e, uint32_t market_id) {
  std::vector<std::string> out;
  if (!e.history) return out;
  MarketList unpacked;
  const Market* m = find_market(history_markets(*e.history, unpacked), market_id);
  if (!m) return out;
  for (const Line& l : m->lines) {
    std::string s = std::string(l.key.view()) + " s=" + std::to_string(l.suspended);
    for (uint32_t i = l.first; i < l.first + l.count; ++i)
      s += " " + std::to_string(m->outcomes[i].id) + ":" + std::to_string(m->outcomes[i].price) + ":" +
           std::to_string(m->outcomes[i].flags);
    out.push_back(s + " ls=" + std::to_string(l.ls));
  }
  return out;
}

feed::Record score(int64_t at, const std::string& status, int h, int a) {
  return test::rec("{\"at\":" + std::to_string(at) + ",\"op\":\"score\",\"id\":\"" + kId + "\",\"home\":" +
                   std::to_string(h) + ",\"away\":" + std::to_string(a) + ",\"status\":\"" + status + "\"}");
}

TEST(LineHistory, RungThatLeavesTheLadderIsKeptWithItsLastRead) {
  Engine e;
  test::apply_all(
      e, {test::event(1, kId, 1, true),
          market(10, kId, 1007,
                 {{"s1.5", 0, {{2101, 130, 0}, {2102, 320, 0}}}, {"s2.5", 0, {{2101, 190, 0}, {2102, 190, 0}}}}),
          market(20, kId, 1007,
                 {{"s1.5", 1, {{2101, 125, 0}, {2102, 340, 4}}}, {"s2.5", 0, {{2101, 185, 0}, {2102, 195, 0}}}}),
          // The ladder moves: 1.5 goes, 3.5 comes.
          market(30, kId, 1007,
                 {{"s2.5", 0, {{2101, 150, 0}, {2102, 240, 0}}}, {"s3.5", 0, {{2101, 260, 0}, {2102, 145, 0}}}})});
  EXPECT_EQ(withdrawn(entry(e), 1007), (std::vector<std::string>{"s1.5 s=1 2101:125:0 2102:340:4 ls=20"}));
  EXPECT_EQ(entry(e).history->lines, 1u);
  EXPECT_EQ(entry(e).history->dropped, 0u);
  // Served odds are unchanged by it: only the current rungs.
  ASSERT_EQ(entry(e).market(1007)->lines.size(), 2u);
}

TEST(LineHistory, SameLinesAgainKeepNoHistory) {
  Engine e;
  test::apply_all(e, {market(10, kId, 1001, {{"s", 0, {{2001, 200, 0}, {2002, 300, 0}, {2003, 400, 0}}}}),
                      market(20, kId, 1001, {{"s", 1, {{2001, 210, 0}, {2002, 300, 0}, {2003, 380, 0}}}})});
  EXPECT_EQ(entry(e).history, nullptr);
}

TEST(LineHistory, EmptyRungWithdrawsThePricedLine) {
  Engine e;
  test::apply_all(e, {market(10, kId, 1007, {{"s2.5", 0, {{2101, 190, 0}, {2102, 190, 0}}}}),
                      market(20, kId, 1007, {{"s2.5", 0, {}}, {"s3.5", 0, {{2101, 260, 0}}}})});
  EXPECT_EQ(withdrawn(entry(e), 1007), (std::vector<std::string>{"s2.5 s=0 2101:190:0 2102:190:0 ls=10"}));
}

// The same keys at the same places are not the same lines priced: a rung
// emptied in place is withdrawn, and priced again in place it leaves the
// history; a key that a record repeats is priced by its first line only.
TEST(LineHistory, SameKeysInPlaceStillWithdrawAndBringBackByTheirOutcomes) {
  Engine e;
  test::apply_all(e, {market(10, kId, 1007, {{"s1.5", 0, {{2101, 130, 0}}}, {"s2.5", 0, {{2101, 190, 0}}}}),
                      market(20, kId, 1007, {{"s1.5", 0, {}}, {"s2.5", 0, {{2101, 185, 0}}}})});
  EXPECT_EQ(withdrawn(entry(e), 1007), (std::vector<std::string>{"s1.5 s=0 2101:130:0 ls=10"}));
  test::apply_all(e, {market(30, kId, 1007, {{"s1.5", 0, {{2101, 140, 0}}}, {"s2.5", 0, {}}})});
  EXPECT_EQ(withdrawn(entry(e), 1007), (std::vector<std::string>{"s2.5 s=0 2101:185:0 ls=20"}));
  // s2.5 twice, the first empty: the market still does not price it.
  test::apply_all(
      e, {market(40, kId, 1007, {{"s1.5", 0, {{2101, 150, 0}}}, {"s2.5", 0, {}}, {"s2.5", 0, {{2101, 170, 0}}}}),
          market(50, kId, 1007, {{"s1.5", 0, {{2101, 155, 0}}}, {"s2.5", 0, {}}, {"s2.5", 0, {{2101, 175, 0}}}})});
  EXPECT_EQ(withdrawn(entry(e), 1007), (std::vector<std::string>{"s2.5 s=0 2101:185:0 ls=20"}));
  ASSERT_NE(entry(e).history, nullptr);
  EXPECT_EQ(entry(e).history->lines, 1u);
}

// A record that repeats a key prices it by its first line: emptied in its
// second place, the key is still priced, and the same record again (the
// same keys in the same places) must not keep it withdrawn.
TEST(LineHistory, ARepeatedKeyIsPricedByItsFirstLineWhereverItStands) {
  Engine e;
  auto twice = [](int64_t at, std::vector<std::array<int, 3>> second) {
    return market(at, kId, 1007, {{"s2.5", 0, {{2101, 190, 0}}}, {"s2.5", 0, second}});
  };
  test::apply_all(e, {twice(10, {{2102, 200, 0}}), twice(20, {})});
  test::apply_all(e, {twice(30, {})});
  ASSERT_NE(entry(e).history, nullptr);
  EXPECT_EQ(entry(e).history->lines, 0u);
  EXPECT_TRUE(withdrawn(entry(e), 1007).empty());
}

TEST(LineHistory, RemovedMarketKeepsEveryLine) {
  Engine e;
  test::apply_all(e, {test::event(1, kId, 1, false),
                      market(10, kId, 1004, {{"s1:0", 0, {{2201, 700, 0}}}, {"s", 0, {{2202, 400, 0}}}}),
                      // Pre-match markets go at kick-off: a removal record.
                      test::rec(R"({"at":20,"op":"market","id":")" + kId + R"(","market":1004,"lines":{}})")});
  EXPECT_EQ(entry(e).market(1004), nullptr);
  EXPECT_EQ(withdrawn(entry(e), 1004),
            (std::vector<std::string>{"s1:0 s=0 2201:700:0 ls=10", "s s=0 2202:400:0 ls=10"}));
}

TEST(LineHistory, RemovedEventKeepsItsLinesWhileItHasAScore) {
  Engine e;
  test::apply_all(
      e, {test::event(1, kId, 1, true), score(2, "live", 0, 0), market(10, kId, 1001, {{"s", 0, {{2001, 200, 0}}}}),
          test::rec(R"({"at":20,"op":"remove","id":")" + kId + R"("})")});
  ASSERT_NE(e.current()->events.find(42), nullptr);
  EXPECT_EQ(withdrawn(entry(e), 1001), (std::vector<std::string>{"s s=0 2001:200:0 ls=10"}));
}

TEST(LineHistory, LinePricedAgainLeavesTheHistory) {
  Engine e;
  test::apply_all(e, {market(10, kId, 1007, {{"s1.5", 0, {{2101, 130, 0}}}, {"s2.5", 0, {{2101, 190, 0}}}}),
                      market(20, kId, 1007, {{"s2.5", 0, {{2101, 185, 0}}}})});
  EXPECT_EQ(withdrawn(entry(e), 1007).size(), 1u);
  test::apply_all(e, {market(30, kId, 1007, {{"s1.5", 0, {{2101, 140, 0}}}, {"s2.5", 0, {{2101, 185, 0}}}})});
  EXPECT_TRUE(withdrawn(entry(e), 1007).empty());  // current again: its read is the served one
  EXPECT_EQ(entry(e).history->lines, 0u);
  // Withdrawn a second time: the newer read replaces the older.
  test::apply_all(e, {market(40, kId, 1007, {{"s2.5", 0, {{2101, 180, 0}}}})});
  EXPECT_EQ(withdrawn(entry(e), 1007), (std::vector<std::string>{"s1.5 s=0 2101:140:0 ls=30"}));
}

// A ladder wider than the per-record key filter (64 lines) takes the plain
// scan; a narrow record against a long history takes the filter: both must
// find the lines priced again among many withdrawn ones.
TEST(LineHistory, WideLaddersAndLongHistoriesFindLinesPricedAgain) {
  auto ladder = [](int from, int to, int price) {
    std::vector<L> v;
    for (int k = from; k < to; ++k) v.push_back({"s" + std::to_string(k) + ".5", 0, {{2101, price + k, 0}}});
    return v;
  };
  Engine e;
  test::apply_all(e, {market(10, kId, 1007, ladder(0, 80, 100))});
  test::apply_all(e, {market(20, kId, 1007, ladder(70, 80, 100))});  // 70 rungs withdrawn
  EXPECT_EQ(entry(e).history->lines, 70u);
  test::apply_all(e, {market(30, kId, 1007, ladder(60, 80, 200))});  // 10 of them priced again
  EXPECT_EQ(entry(e).history->lines, 60u);
  test::apply_all(e, {market(40, kId, 1007, ladder(0, 80, 300))});  // all of them: 80 lines, wider than the filter
  EXPECT_TRUE(withdrawn(entry(e), 1007).empty());
  EXPECT_EQ(entry(e).history->lines, 0u);
  test::apply_all(e, {market(50, kId, 1007, ladder(79, 80, 400))});
  EXPECT_EQ(entry(e).history->lines, 79u);
  EXPECT_EQ(withdrawn(entry(e), 1007).front(), "s0.5 s=0 2101:300:0 ls=40");
}

TEST(LineHistory, FrozenAtTheFirstEnded) {
  Engine e;
  test::apply_all(e, {test::event(1, kId, 1, true),
                      market(10, kId, 1007, {{"s1.5", 0, {{2101, 130, 0}}}, {"s2.5", 0, {{2101, 190, 0}}}}),
                      market(20, kId, 1007, {{"s2.5", 0, {{2101, 185, 0}}}}), score(30, "ended", 2, 1)});
  const LineHistory* at_end = entry(e).history.get();
  ASSERT_NE(at_end, nullptr);
  // After full time the book suspends and removes everything: none of it is
  // a read before full time.
  test::apply_all(e, {market(40, kId, 1007, {{"s3.5", 1, {{2101, 100, 0}}}}),
                      test::rec(R"({"at":50,"op":"market","id":")" + kId + R"(","market":1007,"lines":{}})"),
                      test::rec(R"({"at":60,"op":"remove","id":")" + kId + R"("})")});
  EXPECT_EQ(entry(e).history.get(), at_end);
  EXPECT_EQ(withdrawn(entry(e), 1007), (std::vector<std::string>{"s1.5 s=0 2101:130:0 ls=10"}));
}

TEST(LineHistory, PackedAtTheFirstEndedWithEveryLineAsRead) {
  Engine e;
  std::vector<feed::Record> recs{test::event(1, kId, 1, true)};
  // A ladder of 12 rungs read at 10, then only its last rung priced: 11 withdrawn.
  std::vector<L> ladder;
  for (int i = 0; i < 12; ++i)
    ladder.push_back({"s" + std::to_string(i) + ".5", i % 2, {{2101, 150 + i, 0}, {2102, 300 - i, i % 3 == 0}}});
  recs.push_back(market(10, kId, 1007, ladder));
  recs.push_back(market(20, kId, 1007, {{"s11.5", 0, {{2101, 161, 0}, {2102, 289, 0}}}}));
  recs.push_back(market(25, kId, 1001, {{"s", 0, {{2001, 200, 0}}}}));
  recs.push_back(test::rec(R"({"at":26,"op":"market","id":")" + kId + R"(","market":1001,"lines":{}})"));
  test::apply_all(e, std::move(recs));
  const std::vector<std::string> before = withdrawn(entry(e), 1007), removed = withdrawn(entry(e), 1001);
  const std::string dump = dump_state(*e.current());
  ASSERT_EQ(before.size(), 11u);
  ASSERT_EQ(removed.size(), 1u);
  const size_t unpacked_bytes = history_bytes(entry(e).history.get());

  test::apply_all(e, {score(30, "ended", 2, 1)});
  const LineHistory& h = *entry(e).history;
  EXPECT_TRUE(h.markets.empty());
  EXPECT_FALSE(h.packed.empty());
  EXPECT_EQ(h.lines, 12u);
  EXPECT_EQ(withdrawn(entry(e), 1007), before);
  EXPECT_EQ(withdrawn(entry(e), 1001), removed);
  // The digest reads the same lines: only the score's lines differ.
  const std::string after = dump_state(*e.current());
  EXPECT_EQ(after.substr(after.find("\nW 42 "), after.find("\nS 42 ") - after.find("\nW 42 ")),
            dump.substr(dump.find("\nW 42 "), dump.find("\nS 42 ") - dump.find("\nW 42 ")));
  // Smaller, and the state's byte count follows it.
  EXPECT_LT(history_bytes(&h) * 2, unpacked_bytes);
  EXPECT_GE(history_bytes(&h), sizeof(LineHistory) + h.packed.capacity());
  size_t total = 0;
  e.current()->events.for_each([&](const EventEntry& x) { total += entry_bytes(x); });
  EXPECT_EQ(e.current()->bytes, total);
}

TEST(LineHistory, PublishedSnapshotsNeverChange) {
  Engine e;
  test::apply_all(e, {market(10, kId, 1007, {{"s1.5", 0, {{2101, 130, 0}}}, {"s2.5", 0, {{2101, 190, 0}}}}),
                      market(20, kId, 1007, {{"s2.5", 0, {{2101, 185, 0}}}})});
  SnapshotPtr before = e.current();
  const std::string dump = dump_state(*before);
  test::apply_all(e, {market(30, kId, 1007, {{"s3.5", 0, {{2101, 250, 0}}}}),
                      market(31, kId, 1007, {{"s4.5", 0, {{2101, 350, 0}}}})});
  EXPECT_EQ(withdrawn(entry(e), 1007).size(), 3u);
  EXPECT_EQ(withdrawn(*before->events.find(42), 1007).size(), 1u);
  EXPECT_EQ(dump_state(*before), dump);
}

TEST(LineHistory, BoundedPerEventAndCountsWhatItDrops) {
  Engine e;
  // Every record prices one new rung and withdraws the previous one.
  const uint32_t n = LineHistory::kMaxLines + 10;
  for (uint32_t i = 0; i <= n; ++i) {
    e.apply(market(10 + i, kId, 1007, {{"s" + std::to_string(i) + ".5", 0, {{2101, 190, 0}}}}));
    if (i % 200 == 0) e.commit();
  }
  e.commit();
  EXPECT_EQ(entry(e).history->lines, LineHistory::kMaxLines);
  EXPECT_EQ(entry(e).history->dropped, n - LineHistory::kMaxLines);
}

TEST(LineHistory, InTheStateDigest) {
  // Same served state, different withdrawn lines: different digests.
  Engine a, b;
  test::apply_all(a, {market(10, kId, 1007, {{"s1.5", 0, {{2101, 130, 0}}}}),
                      market(20, kId, 1007, {{"s2.5", 0, {{2101, 190, 0}}}})});
  test::apply_all(b, {market(10, kId, 1007, {{"s0.5", 0, {{2101, 130, 0}}}}),
                      market(20, kId, 1007, {{"s2.5", 0, {{2101, 190, 0}}}})});
  EXPECT_NE(state_digest(*a.current()), state_digest(*b.current()));
  EXPECT_NE(dump_state(*a.current()).find("WL 42 1007 \"s1.5\" s=0 ls=10 n=1 2101:130:0:130:10"), std::string::npos)
      << dump_state(*a.current());
}

}  // namespace
}  // namespace oddsrelay
