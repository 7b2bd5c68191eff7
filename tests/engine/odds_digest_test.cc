// The client-visible digest's terms (engine/core/odds_digest.h): pinned
// against XXH64 values computed by another implementation (Python's xxhash
// package), so that any client language can check its own against this
// table; a market's sum is the sum of its outcomes' terms, empty rungs add
// nothing, and the engine's builder keeps it in the market.
#include "engine/core/odds_digest.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "engine/core/engine.h"
#include "engine/core/market.h"
#include "tests/test_util.h"

namespace oddsrelay {
namespace {

TEST(OddsDigest, TermsAreXxh64OfTheDocumentedText) {
  struct Row {
    uint64_t event;
    uint32_t market;
    const char* line;
    uint32_t outcome;
    int32_t price;
    uint32_t flags, s;
    uint64_t h;  // xxh64("<event>|<market>|<line>|<outcome>|<price>|<flags>|<s>", 0)
  };
  const Row rows[] = {
      {10000001, 1001, "s", 2001, 185, 0, 0, 0x54dd77cc753b9da7ull},
      {10000001, 1001, "s", 2002, 340, 0, 0, 0x73e88ee5258a63c5ull},
      {10000001, 1007, "s2.5", 2005, 190, 1, 1, 0x0a5aff2a3b1712f3ull},
      {10000001, 1004, "s2:1", 2010, 1100, 0, 0, 0x12db442385f48710ull},
  };
  for (const Row& r : rows)
    EXPECT_EQ(outcome_term(r.event, r.market, r.line, r.outcome, r.price, r.flags, r.s), r.h) << r.line << r.outcome;
  EXPECT_EQ(event_term(10000001), 0xf72ec34100af67e1ull);  // xxh64("e|10000001", 0)
}

TEST(OddsDigest, HexIsSixteenLowercaseDigits) {
  EXPECT_EQ(digest_hex(0), "0000000000000000");
  EXPECT_EQ(digest_hex(0xc8c606b19ac6016cull), "c8c606b19ac6016c");
  EXPECT_EQ(digest_hex(UINT64_MAX), "ffffffffffffffff");
}

TEST(OddsDigest, AMarketsSumIsItsOutcomesTermsAndEmptyRungsAddNothing) {
  feed::MarketRec rec;
  rec.market = 1001;
  rec.lines = {{"s", 0, 0, 2}, {"s0.5", 0, 2, 0}};  // the second an empty rung
  rec.outcomes = {{2001, 185, 0}, {2002, 340, 0}};
  MarketPtr m = build_market(rec, nullptr, 1000, 10000001);
  // 0x54dd77cc753b9da7 + 0x73e88ee5258a63c5 mod 2^64
  EXPECT_EQ(m->digest, 0xc8c606b19ac6016cull);
  EXPECT_EQ(market_digest(10000001, *m), m->digest);
  // With the event's term: the sum wraps modulo 2^64.
  EXPECT_EQ(m->digest + event_term(10000001), 0xbff4c9f29b75694dull);
  // The same market under another event is another sum.
  EXPECT_NE(build_market(rec, nullptr, 1000, 10000002)->digest, m->digest);
  // A suspended line changes its outcomes' terms.
  rec.lines[0].suspended = 1;
  EXPECT_NE(build_market(rec, nullptr, 1000, 10000001)->digest, m->digest);
}

// The engine keeps each event's sum of its markets' as markets are added,
// replaced and removed, and zeroes it when the event leaves the lists.
TEST(OddsDigest, TheEngineKeepsEachEventsSumOfItsMarkets) {
  Engine e;
  auto kept = [&](uint64_t n) {
    const EventEntry* x = e.current()->events.find(n);
    EXPECT_TRUE(x);
    uint64_t sum = 0;
    for (const MarketRef& m : x->markets) sum += market_digest(n, *m);
    EXPECT_EQ(x->odds_digest, sum);
    return x->odds_digest;
  };
  test::apply_all(e, {test::event(1, "7", 1, true), test::market(1, "7", 1001, {{"s", 0, {{2001, 185, 0}}}}),
                      test::market(1, "7", 1002, {{"s", 0, {{2001, 200, 0}}}, {"s0.5", 0, {}}})});
  e.commit();
  const uint64_t two = kept(7);
  EXPECT_EQ(two, outcome_term(7, 1001, "s", 2001, 185, 0, 0) + outcome_term(7, 1002, "s", 2001, 200, 0, 0));
  test::apply_all(e, {test::market(2, "7", 1001, {{"s", 1, {{2001, 190, 0}}}}), test::market(2, "7", 1002, {})});
  e.commit();
  EXPECT_EQ(kept(7), outcome_term(7, 1001, "s", 2001, 190, 0, 1));
  test::apply_all(
      e, {test::rec(R"({"at":3,"op":"remove","id":"7"})"), test::market(3, "7", 1003, {{"s", 0, {{1, 1, 0}}}})});
  e.commit();
  EXPECT_EQ(kept(7), outcome_term(7, 1003, "s", 1, 1, 0, 0));
}

}  // namespace
}  // namespace oddsrelay
