// verify=1 in one loop's fan-out (relay/view_digest.h, pt_stream.cc): the
// INFO closing each group carries the digest of the stream's view after
// its filter (event terms for the events its evt: channels list, outcome
// terms for the markets its odds: channels carry), streams without verify
// get none, and a conflating stream's flushed INFO carries it too.
#include "relay/view_digest.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/core/odds_digest.h"
#include "tests/relay/fanout_fixture.h"

namespace oddsrelay::relay {
namespace {

// The "digest" of the last INFO in `frames`, or "" when it has none.
std::string info_digest(const std::vector<std::string>& frames) {
  EXPECT_FALSE(frames.empty());
  const std::string& info = frames.back();
  EXPECT_EQ(kind(info), "INFO");
  const size_t at = info.find("\"digest\":\"");
  return at == std::string::npos ? "" : info.substr(at + 10, 16);
}

uint64_t outcome(uint64_t ev, uint32_t market, int price) { return outcome_term(ev, market, "s", 2001, price, 0, 0); }

// Events 7 and 8 live (sport 1), 7 with markets 1001 and 1002, 8 with
// 1001; event 9 pre-match with 1001 (no odds channel: not live).
struct DigestFanout : Fanout {
  void three_events() {
    fan_out({test::event(1000, "7", 1, true), test::event(1000, "8", 1, true), test::event(1000, "9", 1, false),
             odds(1000, "7", 1001, 150), odds(1000, "7", 1002, 160), odds(1000, "8", 1001, 170),
             odds(1000, "9", 1001, 190)});
  }
};

TEST_F(DigestFanout, EveryInfoOfAVerifyStreamCarriesItsFilteredViewsDigest) {
  StreamConn* all = stream(kAll, {}, {}, {}, true);
  StreamConn* ev7 = stream(kAll, {}, {7}, {}, true);
  StreamConn* m1001 = stream(kAll, {}, {}, {1001}, true);
  StreamConn* live_only = stream(api::kPermLive | api::kPermOdds, {}, {}, {}, true);
  StreamConn* plain = stream(kAll);
  three_events();
  const uint64_t e7 = event_term(7), e8 = event_term(8), e9 = event_term(9);
  const uint64_t m7a = outcome(7, 1001, 150), m7b = outcome(7, 1002, 160), m8 = outcome(8, 1001, 170);
  EXPECT_EQ(info_digest(take(*all)), digest_hex(e7 + e8 + e9 + m7a + m7b + m8));
  EXPECT_EQ(info_digest(take(*ev7)), digest_hex(e7 + m7a + m7b));
  EXPECT_EQ(info_digest(take(*m1001)), digest_hex(e7 + e8 + e9 + m7a + m8));  // markets= does not cut evt:
  EXPECT_EQ(info_digest(take(*live_only)), digest_hex(e7 + e8 + m7a + m7b + m8));
  EXPECT_EQ(info_digest(take(*plain)), "");
  // The next group: a price moves, a market goes, an event leaves.
  fan_out({odds(1100, "7", 1001, 155), test::market(1100, "7", 1002, {}),
           test::rec(R"({"at":1100,"op":"remove","id":"8"})")});
  const uint64_t m7a2 = outcome(7, 1001, 155);
  EXPECT_EQ(info_digest(take(*all)), digest_hex(e7 + e9 + m7a2));
  EXPECT_EQ(info_digest(take(*ev7)), digest_hex(e7 + m7a2));
  EXPECT_EQ(view_digest(*ctx->snap, all->filter()), e7 + e9 + m7a2);
}

TEST_F(DigestFanout, AConflatingStreamsFlushedInfoCarriesTheDigestAtItsSeq) {
  StreamConn* c = stream(kAll, {}, {}, {}, true, 250);
  three_events();  // the first change after a quiet interval goes at once
  EXPECT_EQ(info_digest(take(*c)), digest_hex(view_digest(*ctx->snap, c->filter())));
  fan_out({odds(1100, "7", 1001, 155)});
  EXPECT_TRUE(take(*c).empty());  // held until the interval ends
  ctx->now += 250;
  pt->on_timer();
  EXPECT_EQ(info_digest(take(*c)), digest_hex(view_digest(*ctx->snap, c->filter())));
}

}  // namespace
}  // namespace oddsrelay::relay
