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

TEST(Cli, BusFlags) {
  Options o;
  std::string err;
  ASSERT_TRUE(parse({"--feed", "nats://127.0.0.1:4222/ODDS"}, o, err)) << err;
  EXPECT_EQ(o.feed.kind, FeedSpec::Kind::Bus);
  EXPECT_EQ(o.feed.path, "nats://127.0.0.1:4222/ODDS");
  Options p;
  ASSERT_TRUE(parse({"--publish", "nats://h:5/S", "--publish-max-age", "600", "--publish-max-bytes", "64M",
                     "--publish-buffer=2G", "--publish-snapshot-every", "1000", "--publish-snapshot-interval", "5"},
                    p, err))
      << err;
  EXPECT_EQ(p.publish, "nats://h:5/S");
  EXPECT_EQ(p.publish_max_age_s, 600);
  EXPECT_EQ(p.publish_max_bytes, 64 << 20);
  EXPECT_EQ(p.publish_buffer, int64_t{2} << 30);
  EXPECT_EQ(p.publish_snapshot_every, 1000);
  EXPECT_EQ(p.publish_snapshot_interval_s, 5);
  Options d;
  EXPECT_EQ(d.publish_max_bytes, int64_t{1} << 30);
  EXPECT_EQ(d.publish_snapshot_every, 50000);
  for (std::vector<const char*> bad : {
           std::vector<const char*>{"--feed", "nats://h:1"},                       // no stream
           std::vector<const char*>{"--feed", "nats://h:1/A.B"},                   // not a stream name
           std::vector<const char*>{"--publish", "http://h:1/S"},
           std::vector<const char*>{"--publish-max-bytes", "12X"},
           std::vector<const char*>{"--publish-max-bytes", "1K"},                  // under 1M
           std::vector<const char*>{"--feed", "nats://h:1/S", "--data-dir", "d"},  // an edge's log is the bus
           std::vector<const char*>{"--feed", "nats://h:1/S", "--publish", "nats://h:1/T"},
       }) {
    Options b;
    err.clear();
    EXPECT_FALSE(parse(bad, b, err)) << bad[0] << " " << bad[1];
    EXPECT_FALSE(err.empty());
    EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  }
}

}  // namespace oddsrelay
