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
  EXPECT_EQ(o.retain_ended_ms, 96LL * 3600 * 1000);  // above the 72 h window for corrected results
  EXPECT_EQ(o.feed.sim.tick_ms, 0);
  EXPECT_EQ(o.feed.sim.correct_permille, 0u);
}

TEST(Cli, RetentionAndSoakOptions) {
  Options o;
  std::string err;
  ASSERT_TRUE(parse({"--retain-ended", "90m", "--feed", "sim:minute=3000,tick=30000,correct=50"}, o, err)) << err;
  EXPECT_EQ(o.retain_ended_ms, 90 * 60'000);
  EXPECT_EQ(o.feed.sim.tick_ms, 30000);
  EXPECT_EQ(o.feed.sim.correct_permille, 50u);
  int64_t ms = 0;
  for (auto [spec, want] : std::vector<std::pair<const char*, int64_t>>{
           {"96h", 345'600'000}, {"30s", 30'000}, {"3d", 259'200'000}, {"1s", 1000}, {"3650d", 315'360'000'000}})
    EXPECT_TRUE(parse_duration(spec, ms) && ms == want) << spec;
  for (const char* bad : {"", "s", "0s", "10", "10x", "-5m", "1.5h", "3651d", "h96"})
    EXPECT_FALSE(parse_duration(bad, ms)) << bad;
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
           {"--progress", "-1"}, {"--retain-ended", "0s"}, {"--retain-ended", "96"}, {"--retain-ended"},
           {"--feed", "sim:tick=5"}, {"--feed", "sim:correct=1001"}}) {
    Options o;
    std::string err;
    EXPECT_FALSE(parse(args, o, err)) << args[0];
    EXPECT_FALSE(err.empty());
    EXPECT_EQ(err.find('\n'), std::string::npos);
  }
}

}  // namespace oddsrelay
