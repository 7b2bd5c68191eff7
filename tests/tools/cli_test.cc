#include "tools/oddsrelay/cli.h"

#include <gtest/gtest.h>

namespace oddsrelay {

namespace {
bool parse(std::vector<const char*> args, Options& o, std::string& err) {
  args.insert(args.begin(), "oddsrelay");
  return parse_cli(static_cast<int>(args.size()), args.data(), o, err);
}
}  // namespace

TEST(Cli, Defaults) {
  Options o;
  std::string err;
  ASSERT_TRUE(parse({}, o, err));
  EXPECT_EQ(o.host, "127.0.0.1");
  EXPECT_EQ(o.port, 8080);
  EXPECT_EQ(o.feed.kind, FeedSpec::Kind::Sim);
  EXPECT_EQ(o.feed.sim.seed, 1u);
}

TEST(Cli, EveryFlag) {
  Options o;
  std::string err;
  ASSERT_TRUE(parse({"--listen", "0.0.0.0:9000", "--feed", "sim:seed=7,events=50,rate=1000,minute=100", "--capture",
                     "c.jsonl", "--data-dir=d", "--keys", "k.json", "--progress", "0.5", "--exit-after-replay"},
                    o, err))
      << err;
  EXPECT_EQ(o.host, "0.0.0.0");
  EXPECT_EQ(o.port, 9000);
  EXPECT_EQ(o.feed.sim.seed, 7u);
  EXPECT_EQ(o.feed.sim.events, 50u);
  EXPECT_EQ(o.feed.sim.rate, 1000);
  EXPECT_EQ(o.feed.sim.minute_ms, 100);
  EXPECT_EQ(o.capture, "c.jsonl");
  EXPECT_EQ(o.data_dir, "d");
  EXPECT_EQ(o.keys, "k.json");
  EXPECT_DOUBLE_EQ(o.progress_s, 0.5);
  EXPECT_TRUE(o.exit_after_replay);
}

TEST(Cli, ReplaySpecs) {
  FeedSpec f;
  std::string err;
  ASSERT_TRUE(parse_feed_spec("replay:/tmp/a,b.jsonl", f, err));
  EXPECT_EQ(f.path, "/tmp/a,b.jsonl");
  EXPECT_EQ(f.speed, 1.0);
  ASSERT_TRUE(parse_feed_spec("replay:x.jsonl.gz,speed=max", f, err));
  EXPECT_EQ(f.path, "x.jsonl.gz");
  EXPECT_EQ(f.speed, 0);
  ASSERT_TRUE(parse_feed_spec("replay:x,speed=2.5", f, err));
  EXPECT_EQ(f.speed, 2.5);
}

TEST(Cli, BadInputGivesOneLineReasons) {
  for (std::vector<const char*> args : std::vector<std::vector<const char*>>{
           {"--bogus"}, {"--listen"}, {"--listen", "8080"}, {"--listen", "h:0"}, {"--listen", "h:70000"},
           {"--feed", "kafka"}, {"--feed", "sim:rate=0"}, {"--feed", "sim:seed=x"}, {"--feed", "sim:color=red"},
           {"--feed", "replay:"}, {"--feed", "replay:f,speed=0"}, {"--feed", "replay:f,speed=fast"},
           {"--progress", "-1"}}) {
    Options o;
    std::string err;
    EXPECT_FALSE(parse(args, o, err)) << args[0];
    EXPECT_FALSE(err.empty());
    EXPECT_EQ(err.find('\n'), std::string::npos);
  }
}

TEST(Cli, SlowTimeoutAndHandshakeRate) {
  Options o;
  std::string err;
  ASSERT_TRUE(parse({}, o, err));
  EXPECT_EQ(o.slow_timeout_s, 30);  // the defaults --help and the README state
  EXPECT_EQ(o.handshake_rate, 12);
  ASSERT_TRUE(parse({"--slow-timeout", "0", "--handshake-rate=600"}, o, err)) << err;
  EXPECT_EQ(o.slow_timeout_s, 0);
  EXPECT_EQ(o.handshake_rate, 600);
  EXPECT_FALSE(parse({"--slow-timeout", "3601"}, o, err));
  EXPECT_EQ(err, "bad --slow-timeout '3601' (0..3600)");
  EXPECT_FALSE(parse({"--handshake-rate", "-1"}, o, err));
}

}  // namespace oddsrelay
