#include "protocol/api/api_keys.h"

#include <gtest/gtest.h>

#include "rest/rate_limiter.h"

namespace oddsrelay::rest {

TEST(ApiKeys, ParsesEveryField) {
  auto ks = KeyStore::parse(R"({"keys":[
    {"key":"plain-1","name":"desk-1","enabled":true,"sandbox":false,"rate_limit":300,
     "permissions":["live","odds"],"allow_ips":["127.0.0.1/32","::1"],"widget":{"theme":"dark"},"webhook":{"url":"http://x"}},
    {"key_sha256":"d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592","name":"hashed","enabled":false}]})");
  ASSERT_EQ(ks->size(), 2u);
  const ApiKey* k = ks->find("plain-1");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->name, "desk-1");
  EXPECT_EQ(*k->rate_limit, 300u);
  EXPECT_EQ(k->permissions, static_cast<uint32_t>(kPermLive | kPermOdds));
  EXPECT_EQ(k->widget_json, R"({"theme":"dark"})");
  EXPECT_TRUE(k->allows_ip(*parse_ip("127.0.0.1")));
  EXPECT_TRUE(k->allows_ip(*parse_ip("::1")));
  EXPECT_FALSE(k->allows_ip(*parse_ip("127.0.0.2")));
  // sha256("The quick brown fox jumps over the lazy dog")
  const ApiKey* h = ks->find("The quick brown fox jumps over the lazy dog");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->name, "hashed");
  EXPECT_FALSE(h->enabled);
  EXPECT_EQ(ks->find("plain-2"), nullptr);
  EXPECT_EQ(ks->find(""), nullptr);
}

TEST(ApiKeys, BadFilesSayWhy) {
  const char* cases[][2] = {
      {"{", "not valid JSON"},
      {R"({"keys":{}})", "{\"keys\":[...]}"},
      {R"({"keys":[{"name":"x"}]})", "keys[0] needs"},
      {R"({"keys":[{"key_sha256":"abc"}]})", "64 hex"},
      {R"({"keys":[{"key":"k","rate_limit":-1}]})", "rate_limit"},
      {R"({"keys":[{"key":"k","permissions":["fly"]}]})", "unknown permission"},
      {R"({"keys":[{"key":"k","allow_ips":["300.1.1.1"]}]})", "allow_ips"},
      {R"({"keys":[{"key":"k","allow_ips":["10.0.0.0/33"]}]})", "allow_ips"},
  };
  for (auto& c : cases) {
    try {
      KeyStore::parse(c[0]);
      ADD_FAILURE() << c[0];
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(c[1]), std::string::npos) << e.what();
    }
  }
  // A nesting bomb in a reloaded file is refused, never recursed on the
  // thread's stack (issue 41), and so is a key named twice.
  for (const auto& [text, why] :
       {std::pair<std::string, std::string>{"{\"keys\":" + std::string(200'000, '['),
                                            "keys file refused: nested deeper than 64 levels"},
        {R"({"keys":[],"keys":[]})", "keys file refused: duplicate key \"keys\""}}) {
    try {
      KeyStore::parse(text);
      ADD_FAILURE() << why;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
}

TEST(ApiKeys, Cidrs) {
  auto net = parse_cidr("10.1.0.0/16");
  ASSERT_TRUE(net);
  EXPECT_TRUE(net->contains(*parse_ip("10.1.200.3")));
  EXPECT_FALSE(net->contains(*parse_ip("10.2.0.1")));
  EXPECT_FALSE(net->contains(*parse_ip("::1")));
  auto v6 = parse_cidr("2001:db8::/32");
  ASSERT_TRUE(v6);
  EXPECT_TRUE(v6->contains(*parse_ip("2001:db8:1::5")));
  EXPECT_TRUE(parse_cidr("0.0.0.0/0")->contains(*parse_ip("8.8.8.8")));
  EXPECT_FALSE(parse_cidr("1.2.3.4/"));
  EXPECT_FALSE(parse_cidr("localhost"));
}

TEST(ApiKeys, DemoKeyIsASandboxWithEveryPermission) {
  std::string key;
  auto ks = KeyStore::demo(key);
  const ApiKey* k = ks->find(key);
  ASSERT_NE(k, nullptr);
  EXPECT_TRUE(k->sandbox);
  EXPECT_EQ(k->permissions, 63u);
  std::string other;
  KeyStore::demo(other);
  EXPECT_NE(key, other);
}

TEST(RateLimiter, CountsPerWindowAndResets) {
  auto ks =
      KeyStore::parse(R"({"keys":[{"key":"a","rate_limit":2},{"key":"b"},{"key":"c","rate_limit":1,"sandbox":true}]})");
  RateLimiter rl(60);
  const ApiKey& a = *ks->find("a");
  EXPECT_TRUE(rl.check(a, 6000).allowed);
  EXPECT_TRUE(rl.check(a, 6010).allowed);
  auto v = rl.check(a, 6045);
  EXPECT_FALSE(v.allowed);
  EXPECT_EQ(v.limit, 2u);
  EXPECT_EQ(v.retry_after, 15);  // the bucket [6000, 6060) resets at 6060
  EXPECT_TRUE(rl.check(a, 6060).allowed);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_TRUE(rl.check(*ks->find("b"), 6000).allowed);  // no rate_limit: unlimited
    EXPECT_TRUE(rl.check(*ks->find("c"), 6000).allowed);  // sandbox: unlimited
  }
}

TEST(RateLimiter, RetryAfterCountsToTheBucketEnd) {
  auto ks = KeyStore::parse(R"({"keys":[{"key":"a","rate_limit":1}]})");
  const ApiKey& a = *ks->find("a");
  RateLimiter rl(10);
  EXPECT_EQ(rl.window(), 10);
  EXPECT_TRUE(rl.check(a, 1000).allowed);  // 1000 starts the bucket [1000, 1010)
  EXPECT_EQ(rl.check(a, 1000).retry_after, 10);
  EXPECT_EQ(rl.check(a, 1009).retry_after, 1);
  auto v = rl.check(a, 1010);
  EXPECT_TRUE(v.allowed);
  EXPECT_EQ(v.retry_after, 0);
}

TEST(RateLimiter, CountsSurviveAKeysReload) {
  // Counted per key digest: the same key in a freshly loaded store is the
  // same count; another key is not.
  auto before = KeyStore::parse(R"({"keys":[{"key":"a","rate_limit":2}]})");
  auto after = KeyStore::parse(R"({"keys":[{"key":"b","rate_limit":2},{"key":"a","rate_limit":2,"name":"renamed"}]})");
  RateLimiter rl(60);
  EXPECT_TRUE(rl.check(*before->find("a"), 6000).allowed);
  EXPECT_TRUE(rl.check(*before->find("a"), 6001).allowed);
  EXPECT_FALSE(rl.check(*after->find("a"), 6002).allowed);
  EXPECT_TRUE(rl.check(*after->find("b"), 6002).allowed);
}

// Counts of keys removed on reload (or idle) leave with their window: the
// map holds the keys seen in the current window, not every key ever seen.
TEST(RateLimiter, ForgetsKeysOfPastWindows) {
  RateLimiter rl(60);
  std::string json = R"({"keys":[)";
  for (int i = 0; i < 100; ++i)
    json += (i ? "," : "") + std::string(R"({"key":"k)") + std::to_string(i) + R"(","rate_limit":5})";
  auto old_keys = KeyStore::parse(json + "]}");
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(rl.check(*old_keys->find("k" + std::to_string(i)), 6000).allowed);
  EXPECT_EQ(rl.tracked(), 100u);
  auto fresh = KeyStore::parse(R"({"keys":[{"key":"new","rate_limit":1}]})");  // a reload dropped them all
  EXPECT_TRUE(rl.check(*fresh->find("new"), 6061).allowed);
  EXPECT_EQ(rl.tracked(), 1u);
  EXPECT_FALSE(rl.check(*fresh->find("new"), 6062).allowed);  // its own count is kept within the window
}

}  // namespace oddsrelay::rest
