// The rate limiter's state as the X-RateLimit-* headers report it
// (docs/api.md "Rate-limit headers"), on explicit clock values.
#include "rest/rate_limiter.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

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

// The limit is exact across REST loops: N threads hammering one key in one
// window get exactly `limit` requests through, and every refusal reports
// nothing remaining; a second key in the same shard keeps its own count.
TEST(RateLimiterThreads, OneKeyFromManyThreadsGetsExactlyTheLimit) {
  auto ks = KeyStore::parse(R"({"keys":[{"key":"hot","rate_limit":5000},{"key":"other","rate_limit":10}]})");
  const ApiKey& hot = *ks->find("hot");
  const ApiKey& other = *ks->find("other");
  RateLimiter rl(60);
  constexpr int kThreads = 8, kEach = 2000;  // 16000 tries for 5000 places
  std::atomic<int> allowed{0}, bad_remaining{0}, other_allowed{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        auto v = rl.check(hot, 6000 + i % 30);  // all in the window [6000, 6060)
        if (v.allowed)
          allowed.fetch_add(1);
        else if (v.remaining != 0 || v.retry_after != 60 - i % 30)
          bad_remaining.fetch_add(1);
        if (t == 0 && i < 20 && rl.check(other, 6000).allowed) other_allowed.fetch_add(1);
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(allowed.load(), 5000);
  EXPECT_EQ(bad_remaining.load(), 0);
  EXPECT_EQ(other_allowed.load(), 10);
  EXPECT_FALSE(rl.check(hot, 6059).allowed);
  EXPECT_TRUE(rl.check(hot, 6060).allowed);  // the next window
}

// At a window boundary, loops whose clock reads straddle it never reset a
// count the newer window already holds.
TEST(RateLimiterThreads, ALateClockReadCountsInTheNewerWindow) {
  auto ks = KeyStore::parse(R"({"keys":[{"key":"a","rate_limit":3}]})");
  const ApiKey& a = *ks->find("a");
  RateLimiter rl(60);
  EXPECT_TRUE(rl.check(a, 6060).allowed);  // one loop: the window [6060, 6120) has begun
  auto late = rl.check(a, 6059);           // another loop read the clock just before
  EXPECT_TRUE(late.allowed);
  EXPECT_EQ(late.remaining, 1u);  // counted in the newer window, not a fresh old one
  EXPECT_TRUE(rl.check(a, 6060).allowed);
  EXPECT_FALSE(rl.check(a, 6061).allowed);
  EXPECT_FALSE(rl.check(a, 6059).allowed);
}

}  // namespace
}  // namespace oddsrelay::rest
