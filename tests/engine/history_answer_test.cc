// The odds-history answer's body (engine/history/history_answer.h), which
// the server and `oddsfeed history` both write: the JSON nesting (a market
// or line only when an outcome in it is wanted), from/to cutting points
// but not open/close, the close before live, candles, CSV's empty cells,
// and an event with no history.
#include "engine/history/history_answer.h"

#include <gtest/gtest.h>

#include "engine/core/engine.h"
#include "engine/history/candles.h"
#include "engine/history/history_store.h"
#include "protocol/api/envelope.h"
#include "tests/test_util.h"

namespace oddsrelay::history {
namespace {

using test::market;

const std::string kAnswerId = "s7-101.5001";

struct Answer {
  Engine engine;
  HistoryStore store;
  uint64_t number = 0;
  explicit Answer(std::vector<feed::Record> recs) {
    number = recs.front().number;
    for (auto& r : recs) engine.apply(std::move(r));
    store.apply(*engine.commit());
  }
  std::string json(const HistoryQuery& q) const {
    std::string out;
    store.read(number, [&](const EventHistory* h, const HeldState& st) {
      out = api::success_body([&](json::Writer& w) { write_history_json(w, q, kAnswerId, h, st); });
    });
    return out;
  }
  std::string csv(const HistoryQuery& q) const {
    std::string out;
    store.read(number, [&](const EventHistory* h, const HeldState&) { out = history_csv(q, h); });
    return out;
  }
};

std::vector<feed::Record> records() {
  return {market(1000, kAnswerId, 1, {{"s2.5", 0, {{1, 190, 0}, {2, 195, 0}}}, {"s3.5", 0, {{1, 300, 0}}}}),
          market(2000, kAnswerId, 2, {{"s", 0, {{7, 111, 0}}}}),
          market(61000, kAnswerId, 1, {{"s2.5", 1, {{1, 200, 4}, {2, 195, 0}}}}),  // s3.5 withdrawn
          test::event(62000, kAnswerId, 1, true), market(63000, kAnswerId, 2, {{"s", 0, {{7, 120, 0}}}})};
}

const char* const kHead = R"({"success":true,"id":"s7-101.5001","epoch":"","seq":5,)";

TEST(HistoryAnswer, JsonNestsByMarketLineOutcomeAndFiltersWholeObjects) {
  Answer a(records());
  HistoryQuery q;
  q.outcome = 7;
  EXPECT_EQ(
      a.json(q),
      std::string(kHead) +
          R"("from":0,"to":63000,"interval":"raw","held_from_seq":0,"data":{"2":{"s":{"7":{"open":[111,0,2000,2],)"
          R"("close":[111,0,2000,2],"final":true,"points":[[2000,111,0,0,2],[63000,120,0,0,5]]}}}}})");
  q = {};
  q.market = 1;
  q.line = "s3.5";
  q.from = 1500;
  EXPECT_EQ(
      a.json(q),
      std::string(kHead) +
          R"("from":1500,"to":63000,"interval":"raw","held_from_seq":0,"data":{"1":{"s3.5":{"1":{"open":[300,0,1000,1],)"
          R"("close":[300,0,1000,1],"final":true,"points":[[61000,null,null,null,3]]}}}}})");
  q.line = "none";
  EXPECT_EQ(a.json(q), std::string(kHead) + R"("from":1500,"to":63000,"interval":"raw","held_from_seq":0,"data":{}})");
}

TEST(HistoryAnswer, CandlesAndCsv) {
  Answer a(records());
  HistoryQuery q;
  q.market = 1;
  q.line = "s2.5";
  q.outcome = 1;
  q.interval = "1m";
  q.interval_ms = *interval_ms("1m");
  EXPECT_EQ(
      a.json(q),
      std::string(kHead) +
          R"("from":0,"to":63000,"interval":"1m","held_from_seq":0,"data":{"1":{"s2.5":{"1":{"open":[190,0,1000,1],)"
          R"("close":[200,4,61000,3],"final":true,"candles":[[0,190,190,190,190,1],)"
          R"([60000,200,200,200,200,1]]}}}}})");
  EXPECT_EQ(a.csv(q),
            "market,line,outcome,t0,open,high,low,close,n\n1,s2.5,1,0,190,190,190,190,1\n"
            "1,s2.5,1,60000,200,200,200,200,1\n");
  q = {};
  q.market = 1;
  EXPECT_EQ(a.csv(q),
            "market,line,outcome,ts,price,flags,s,seq\n1,s2.5,1,1000,190,0,0,1\n1,s2.5,1,61000,200,4,1,3\n"
            "1,s2.5,2,1000,195,0,0,1\n1,s2.5,2,61000,195,0,1,3\n1,s3.5,1,1000,300,0,0,1\n1,s3.5,1,61000,,,,3\n");
}

TEST(HistoryAnswer, NoHistoryIsEmptyData) {
  HeldState st;
  st.seq = 9;
  st.clock = 5000;
  st.held_from = 100;
  HistoryQuery q;
  std::string out = api::success_body([&](json::Writer& w) { write_history_json(w, q, "x", nullptr, st); });
  EXPECT_EQ(out,
            R"({"success":true,"id":"x","epoch":"","seq":9,"from":100,"to":5000,"interval":"raw","held_from_seq":0,)"
            R"("held_from":100,"data":{}})");
  q.csv = true;
  EXPECT_EQ(history_csv(q, nullptr), "market,line,outcome,ts,price,flags,s,seq\n");
  q.to = 99;
  EXPECT_TRUE(before_held(q, st));
  q.to = 100;
  EXPECT_FALSE(before_held(q, st));
}

}  // namespace
}  // namespace oddsrelay::history
