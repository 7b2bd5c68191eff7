// The permission table and its check (protocol/api/access.h), and the per-key
// stream handshake bound (rest/handshake_limiter.h), on explicit times.
#include "protocol/api/access.h"

#include <gtest/gtest.h>

#include "rest/handshake_limiter.h"

namespace oddsrelay::rest {
namespace {

TEST(Access, EachDataNeedsItsPermission) {
  EXPECT_EQ(permission_for(Data::LiveEvent), kPermLive);
  EXPECT_EQ(permission_for(Data::PrematchEvent), kPermPrematch);
  EXPECT_EQ(permission_for(Data::Price), kPermOdds);
  EXPECT_EQ(permission_for(Data::Dictionary), kPermOdds);
  EXPECT_EQ(permission_for(Data::Score), kPermScores);
  EXPECT_EQ(permission_for(Data::Settlement), kPermScores);
  EXPECT_EQ(permission_for(Data::Widget), kPermWidget);
  EXPECT_EQ(permission_for(Data::Stream), kPermStream);
  EXPECT_EQ(event_data(true), Data::LiveEvent);
  EXPECT_EQ(event_data(false), Data::PrematchEvent);
}

TEST(Access, MissingNamesOnePermissionOrTheWholeAlternative) {
  Needs n;
  n.add(Data::LiveEvent).add(Data::Price).add(Data::Score);
  EXPECT_EQ(missing(n, kPermLive | kPermOdds | kPermScores), 0u);
  EXPECT_EQ(missing(n, kPermLive | kPermScores), uint32_t{kPermOdds});
  EXPECT_EQ(missing(n, kPermPrematch), uint32_t{kPermLive});  // the lowest one missing
  EXPECT_EQ(refusal(kPermOdds), "API key lacks the 'odds' permission");
  Needs either;
  either.add_any(Data::LiveEvent).add_any(Data::PrematchEvent);
  EXPECT_EQ(missing(either, kPermPrematch), 0u);
  EXPECT_EQ(missing(either, kPermOdds), uint32_t{kPermLive | kPermPrematch});
  EXPECT_EQ(refusal(kPermLive | kPermPrematch), "API key lacks the 'live' or 'prematch' permission");
  either.add(Data::LiveEvent);  // resolved to a live event: 'prematch' alone no longer does
  EXPECT_EQ(missing(either, kPermPrematch), uint32_t{kPermLive});
  EXPECT_EQ(missing(Needs{}, 0), 0u);
}

ApiKey key(uint32_t slots, bool sandbox = false) {
  ApiKey k;
  k.digest = sha256("handshake-key-" + std::to_string(slots));
  k.ws_connections = slots;
  k.sandbox = sandbox;
  return k;
}

TEST(HandshakeLimiter, BurstOfRatePerSlotThenRefillsPerMinute) {
  HandshakeLimiter l(3);
  const ApiKey k = key(2);  // 3 x 2 = a bucket of 6
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(l.check(k, 1000).allowed) << i;
  auto v = l.check(k, 1000);
  EXPECT_FALSE(v.allowed);
  EXPECT_EQ(v.limit, 6u);
  EXPECT_EQ(v.retry_after, 10);  // 6 a minute: one back every 10 s
  EXPECT_FALSE(l.check(k, 10'999).allowed);
  EXPECT_TRUE(l.check(k, 11'000).allowed);
  EXPECT_FALSE(l.check(k, 11'000).allowed);
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(l.check(k, 1'000'000).allowed) << i;  // refilled, never past full
  EXPECT_FALSE(l.check(k, 1'000'000).allowed);
  // Other keys have their own buckets; sandbox keys and rate 0 are unbounded.
  EXPECT_TRUE(l.check(key(1), 1'000'000).allowed);
  const ApiKey sb = key(1, true);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(l.check(sb, 0).allowed);
  HandshakeLimiter off(0);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(off.check(k, 0).allowed);
}

}  // namespace
}  // namespace oddsrelay::rest
