// The rate limiter's state as the X-RateLimit-* headers report it
// (docs/api.md "Rate-limit headers"), on explicit clock values.
#include "rest/rate_limiter.h"

#include <gtest/gtest.h>

namespace oddsrelay::rest {
namespace {

TEST(RateLimiterState, RemainingFallsByOneAndResetCountsToTheWindowEnd) {
  auto ks = KeyStore::parse(R"({"keys":[{"key":"a","rate_limit":3}]})");
  const ApiKey& a = *ks->find("a");
  RateLimiter rl(60);
  auto v = rl.check(a, 6000);  // the window [6000, 6060)
  EXPECT_TRUE(v.allowed);
  EXPECT_EQ(v.limit, 3u);
  EXPECT_EQ(v.remaining, 2u);
  EXPECT_EQ(v.reset, 60);
  v = rl.check(a, 6001);
  EXPECT_EQ(v.remaining, 1u);
  EXPECT_EQ(v.reset, 59);
  v = rl.check(a, 6059);
  EXPECT_TRUE(v.allowed);
  EXPECT_EQ(v.remaining, 0u);
  EXPECT_EQ(v.reset, 1);
  v = rl.check(a, 6059);  // refused: nothing remains, reset and retry_after agree
  EXPECT_FALSE(v.allowed);
  EXPECT_EQ(v.remaining, 0u);
  EXPECT_EQ(v.reset, 1);
  EXPECT_EQ(v.retry_after, 1);
  v = rl.check(a, 6060);  // a new window: the full limit less this request
  EXPECT_TRUE(v.allowed);
  EXPECT_EQ(v.remaining, 2u);
  EXPECT_EQ(v.reset, 60);
}

TEST(RateLimiterState, UnlimitedKeysReportNoLimit) {
  auto ks = KeyStore::parse(R"({"keys":[{"key":"b"},{"key":"c","rate_limit":1,"sandbox":true}]})");
  RateLimiter rl(60);
  for (const char* k : {"b", "c"}) {
    auto v = rl.check(*ks->find(k), 6000);
    EXPECT_TRUE(v.allowed) << k;
    EXPECT_EQ(v.limit, 0u) << k;  // the router sends no X-RateLimit-* for it
  }
}

}  // namespace
}  // namespace oddsrelay::rest
