// Every flag of tools/oddsrelay/cli.cc: a good value lands in its Options
// field (both `--flag value` and `--flag=value`), bounds are inclusive, and a
// bad or missing value is refused with one line naming the flag.
#include "tools/oddsrelay/cli.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace oddsrelay {

namespace {
bool parse(std::vector<const char*> args, Options& o, std::string& err) {
  args.insert(args.begin(), "oddsrelay");
  return parse_cli(static_cast<int>(args.size()), args.data(), o, err);
}

// Refused, with a one-line reason that holds `words`.
void expect_refused(std::vector<const char*> args, const std::string& words) {
  Options o;
  std::string err;
  std::string shown;
  for (const char* a : args) shown += std::string(a) + " ";
  EXPECT_FALSE(parse(args, o, err)) << shown;
  EXPECT_NE(err.find(words), std::string::npos) << shown << "-> " << err;
  EXPECT_EQ(err.find('\n'), std::string::npos) << err;
}

// The integer flags as docs and --help give them: name, bounds, field.
struct IntFlag {
  const char* name;
  int64_t min, max;
  int64_t Options::*field;
};
const IntFlag kIntFlags[] = {
    {"--header-timeout", 1, 3'600'000, &Options::header_timeout_ms},
    {"--idle-timeout", 1, 3'600'000, &Options::idle_timeout_ms},
    {"--http-threads", 1, 64, &Options::http_threads},
    {"--rate-window", 1, 3600, &Options::rate_window_s},
    {"--ws-update", 10, 3'600'000, &Options::ws_update_ms},
    {"--ws-ping", 100, 3'600'000, &Options::ws_ping_ms},
    {"--max-queue-bytes", 64 * 1024, int64_t{1} << 32, &Options::max_queue_bytes},
    {"--stream-ttl", 1, 30 * 86400, &Options::stream_ttl_s},
    {"--webhook-retries", 1, 1000, &Options::webhook_retries},
    {"--webhook-timeout", 10, 600'000, &Options::webhook_timeout_ms},
    {"--history-bytes", 64 << 10, int64_t{1} << 40, &Options::history_bytes},
};
}  // namespace

TEST(Cli, Defaults) {
  Options o;
  std::string err;
  ASSERT_TRUE(parse({}, o, err));
  EXPECT_EQ(o.host, "127.0.0.1");
  EXPECT_EQ(o.port, 8080);
  EXPECT_EQ(o.feed.kind, FeedSpec::Kind::Sim);
  EXPECT_EQ(o.feed.sim.seed, 1u);
  EXPECT_EQ(o.feed.sim.events, 300u);
  EXPECT_EQ(o.feed.sim.rate, 200);
  EXPECT_EQ(o.feed.sim.minute_ms, 4000);
  EXPECT_EQ(o.capture, "");
  EXPECT_EQ(o.data_dir, "");
  EXPECT_EQ(o.keys, "");
  EXPECT_EQ(o.catalog, "");
  EXPECT_DOUBLE_EQ(o.progress_s, 5);
  EXPECT_FALSE(o.exit_after_replay);
  EXPECT_FALSE(o.help);
  EXPECT_EQ(o.header_timeout_ms, 10'000);
  EXPECT_EQ(o.idle_timeout_ms, 60'000);
  EXPECT_EQ(o.http_threads, default_http_threads(std::thread::hardware_concurrency()));
  EXPECT_EQ(o.rate_window_s, 60);
  EXPECT_EQ(o.ws_update_ms, 1000);
  EXPECT_EQ(o.ws_ping_ms, 30'000);
  EXPECT_EQ(o.max_queue_bytes, 8 << 20);
  EXPECT_EQ(o.stream_ttl_s, 3600);
  EXPECT_EQ(o.webhook_retries, 8);
  EXPECT_EQ(o.webhook_timeout_ms, 3000);
  EXPECT_EQ(o.stream_sports, (std::vector<int32_t>{1, 2, 5}));
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
  ASSERT_TRUE(parse({"--listen",
                     "0.0.0.0:9000",
                     "--feed",
                     "sim:seed=7,events=50,rate=1000,minute=100",
                     "--capture",
                     "c.jsonl",
                     "--data-dir=d",
                     "--keys",
                     "k.json",
                     "--catalog",
                     "cat.json",
                     "--progress",
                     "0.5",
                     "--exit-after-replay",
                     "--header-timeout",
                     "1500",
                     "--idle-timeout=2500",
                     "--rate-window",
                     "7",
                     "--ws-update",
                     "250",
                     "--ws-ping",
                     "400",
                     "--max-queue-bytes",
                     "70000",
                     "--stream-sports",
                     "3,4,12",
                     "--stream-ttl",
                     "90",
                     "--webhook-retries",
                     "2",
                     "--webhook-timeout",
                     "750",
                     "--retain-ended=2h"},
                    o, err))
      << err;
  EXPECT_EQ(o.host, "0.0.0.0");
  EXPECT_EQ(o.port, 9000);
  EXPECT_EQ(o.feed.kind, FeedSpec::Kind::Sim);
  EXPECT_EQ(o.feed.sim.seed, 7u);
  EXPECT_EQ(o.feed.sim.events, 50u);
  EXPECT_EQ(o.feed.sim.rate, 1000);
  EXPECT_EQ(o.feed.sim.minute_ms, 100);
  EXPECT_EQ(o.capture, "c.jsonl");
  EXPECT_EQ(o.data_dir, "d");
  EXPECT_EQ(o.keys, "k.json");
  EXPECT_EQ(o.catalog, "cat.json");
  EXPECT_DOUBLE_EQ(o.progress_s, 0.5);
  EXPECT_TRUE(o.exit_after_replay);
  EXPECT_EQ(o.header_timeout_ms, 1500);
  EXPECT_EQ(o.idle_timeout_ms, 2500);
  EXPECT_EQ(o.rate_window_s, 7);
  EXPECT_EQ(o.ws_update_ms, 250);
  EXPECT_EQ(o.ws_ping_ms, 400);
  EXPECT_EQ(o.max_queue_bytes, 70000);
  EXPECT_EQ(o.stream_sports, (std::vector<int32_t>{3, 4, 12}));
  EXPECT_EQ(o.stream_ttl_s, 90);
  EXPECT_EQ(o.webhook_retries, 2);
  EXPECT_EQ(o.webhook_timeout_ms, 750);
  EXPECT_EQ(o.retain_ended_ms, 2 * 3'600'000);
  EXPECT_FALSE(o.help);
}

TEST(Cli, HelpInBothSpellings) {
  for (const char* flag : {"--help", "-h"}) {
    Options o;
    std::string err;
    ASSERT_TRUE(parse({flag}, o, err)) << flag;
    EXPECT_TRUE(o.help) << flag;
  }
}

TEST(Cli, IntegerFlagsTakeTheirBoundsAndRefuseTheRest) {
  for (const IntFlag& f : kIntFlags) {
    SCOPED_TRACE(f.name);
    for (int64_t good : {f.min, f.max, (f.min + f.max) / 2}) {
      Options o;
      std::string err;
      const std::string v = std::to_string(good), inline_form = std::string(f.name) + "=" + v;
      ASSERT_TRUE(parse({f.name, v.c_str()}, o, err)) << err;
      EXPECT_EQ(o.*(f.field), good);
      Options o2;
      ASSERT_TRUE(parse({inline_form.c_str()}, o2, err)) << err;
      EXPECT_EQ(o2.*(f.field), good);
    }
    const std::string range = "(" + std::to_string(f.min) + ".." + std::to_string(f.max) + ")";
    const std::string below = std::to_string(f.min - 1), above = std::to_string(f.max + 1);
    for (const std::string& bad : {below, above, std::string("-5"), std::string("12x"), std::string("ten"),
                                   std::string(""), std::string("1.5"), std::string("99999999999999999999999")})
      expect_refused({f.name, bad.c_str()}, std::string("bad ") + f.name + " '" + bad + "' " + range);
    expect_refused({f.name}, std::string(f.name) + " needs a value");
  }
}

TEST(Cli, StringFlagsNeedAValue) {
  const std::pair<const char*, std::string Options::*> flags[] = {{"--capture", &Options::capture},
                                                                  {"--data-dir", &Options::data_dir},
                                                                  {"--keys", &Options::keys},
                                                                  {"--catalog", &Options::catalog}};
  for (auto [name, field] : flags) {
    SCOPED_TRACE(name);
    Options o;
    std::string err;
    const std::string inline_form = std::string(name) + "=a=b.json";  // only the first '=' splits
    ASSERT_TRUE(parse({inline_form.c_str()}, o, err)) << err;
    EXPECT_EQ(o.*field, "a=b.json");
    expect_refused({name}, std::string(name) + " needs a value");
  }
}

TEST(Cli, ListenFeedProgressAndStreamSports) {
  Options o;
  std::string err;
  ASSERT_TRUE(parse({"--listen=[::1]:1", "--stream-sports", "", "--progress", "0"}, o, err)) << err;
  EXPECT_EQ(o.host, "[::1]");
  EXPECT_EQ(o.port, 1);
  EXPECT_TRUE(o.stream_sports.empty());  // empty = no stream coverage
  EXPECT_DOUBLE_EQ(o.progress_s, 0);
  ASSERT_TRUE(parse({"--listen", "h:65535", "--feed", "replay:f.jsonl,speed=4", "--stream-sports", "100000"}, o, err));
  EXPECT_EQ(o.port, 65535);
  EXPECT_EQ(o.feed.kind, FeedSpec::Kind::Replay);
  EXPECT_EQ(o.feed.path, "f.jsonl");
  EXPECT_EQ(o.feed.speed, 4);
  EXPECT_EQ(o.stream_sports, (std::vector<int32_t>{100000}));

  for (const char* bad : {"8080", "h:0", "h:70000", ":80", "h:", "h:x", ""})
    expect_refused({"--listen", bad}, "bad --listen");
  expect_refused({"--listen"}, "--listen needs a value");
  for (const char* bad : {"x", "-1", "", "1s"}) expect_refused({"--progress", bad}, "bad --progress");
  expect_refused({"--progress"}, "--progress needs a value");
  for (const char* bad : {"0", "x", "1,,2", "100001", "-3", "1;2"})
    expect_refused({"--stream-sports", bad}, "bad --stream-sports");
  expect_refused({"--stream-sports"}, "--stream-sports needs a value");
  expect_refused({"--feed"}, "--feed needs a value");
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

TEST(Cli, SimSpecBounds) {
  FeedSpec f;
  std::string err;
  ASSERT_TRUE(parse_feed_spec("sim", f, err));
  EXPECT_EQ(f.kind, FeedSpec::Kind::Sim);
  ASSERT_TRUE(parse_feed_spec("sim:events=1,rate=1,minute=10", f, err));
  EXPECT_EQ(f.sim.events, 1u);
  EXPECT_EQ(f.sim.rate, 1);
  EXPECT_EQ(f.sim.minute_ms, 10);
  ASSERT_TRUE(parse_feed_spec("sim:events=1000000,rate=10000000,minute=600000", f, err));
  EXPECT_EQ(f.sim.events, 1000000u);
  EXPECT_EQ(f.sim.rate, 10000000);
  EXPECT_EQ(f.sim.minute_ms, 600000);
  for (const char* bad : {"sim:events=0", "sim:events=1000001", "sim:rate=10000001", "sim:minute=9",
                          "sim:minute=600001", "sim:seed=", "sim:seed"})
    expect_refused({"--feed", bad}, "bad --feed sim option");
}

TEST(Cli, BadInputGivesOneLineReasons) {
  for (std::vector<const char*> args : std::vector<std::vector<const char*>>{{"--bogus"},
                                                                             {"--listen"},
                                                                             {"--listen", "8080"},
                                                                             {"--listen", "h:0"},
                                                                             {"--listen", "h:70000"},
                                                                             {"--feed", "kafka"},
                                                                             {"--feed", "sim:rate=0"},
                                                                             {"--feed", "sim:seed=x"},
                                                                             {"--feed", "sim:color=red"},
                                                                             {"--feed", "replay:"},
                                                                             {"--feed", "replay:f,speed=0"},
                                                                             {"--feed", "replay:f,speed=fast"},
                                                                             {"--progress", "-1"},
                                                                             {"-x"},
                                                                             {"positional"},
                                                                             {"--retain-ended", "0s"},
                                                                             {"--retain-ended", "96"},
                                                                             {"--retain-ended"},
                                                                             {"--feed", "sim:tick=5"},
                                                                             {"--feed", "sim:correct=1001"}}) {
    Options o;
    std::string err;
    EXPECT_FALSE(parse(args, o, err)) << args[0];
    EXPECT_FALSE(err.empty());
    EXPECT_EQ(err.find('\n'), std::string::npos);
  }
  expect_refused({"--frobnicate"}, "unknown option '--frobnicate'");
  expect_refused({"--feed", "kafka"}, "unknown --feed 'kafka'");
  expect_refused({"--feed", "replay:"}, "--feed replay: needs a file");
  expect_refused({"--feed", "replay:f,speed=0"}, "bad replay speed '0'");
  expect_refused({"--feed", "replay:f,speed=1000001"}, "bad replay speed");
  // Switches take no value: `--exit-after-replay=no` must not turn it on.
  expect_refused({"--exit-after-replay=no"}, "--exit-after-replay takes no value");
  expect_refused({"--help=x"}, "--help takes no value");
}

// --catalog-reload: hourly unless told; a duration, or 0 for SIGHUP only.
TEST(Cli, CatalogReload) {
  Options o;
  std::string err;
  EXPECT_EQ(o.catalog_reload_ms, 3'600'000);
  ASSERT_TRUE(parse({"--catalog", "c.json", "--catalog-reload", "10m"}, o, err)) << err;
  EXPECT_EQ(o.catalog_reload_ms, 600'000);
  ASSERT_TRUE(parse({"--catalog-reload=0"}, o, err)) << err;
  EXPECT_EQ(o.catalog_reload_ms, 0);
  ASSERT_TRUE(parse({"--catalog-reload", "1s"}, o, err)) << err;
  EXPECT_EQ(o.catalog_reload_ms, 1000);
  for (const char* bad : {"0s", "10", "1w", "-1h", ""})
    expect_refused({"--catalog-reload", bad}, "bad --catalog-reload");
  expect_refused({"--catalog-reload"}, "--catalog-reload");
}

TEST(Cli, History) {
  Options o;
  std::string err;
  ASSERT_TRUE(parse({}, o, err));
  EXPECT_TRUE(o.history);
  EXPECT_EQ(o.history_bytes, int64_t{256} << 20);
  ASSERT_TRUE(parse({"--history", "off", "--history-bytes", "64M"}, o, err)) << err;
  EXPECT_FALSE(o.history);
  EXPECT_EQ(o.history_bytes, int64_t{64} << 20);
  EXPECT_FALSE(parse({"--history", "maybe"}, o, err));
  EXPECT_EQ(err, "bad --history 'maybe' (on or off)");
}

TEST(Cli, RelayIo) {
  Options o;
  std::string err;
  ASSERT_TRUE(parse({}, o, err));
  EXPECT_FALSE(o.relay_uring);  // writev, the default --help and the README state
  ASSERT_TRUE(parse({"--relay-io", "uring"}, o, err)) << err;
  EXPECT_TRUE(o.relay_uring);
  ASSERT_TRUE(parse({"--relay-io=writev"}, o, err)) << err;
  EXPECT_FALSE(o.relay_uring);
  EXPECT_FALSE(parse({"--relay-io", "epoll"}, o, err));
  EXPECT_EQ(err, "bad --relay-io 'epoll' (uring or writev)");
}

TEST(Cli, RelayPace) {
  Options o;
  std::string err;
  ASSERT_TRUE(parse({}, o, err));
  EXPECT_EQ(o.relay_pace, 0);  // off, as --help and the README state
  ASSERT_TRUE(parse({"--relay-pace", "80"}, o, err)) << err;
  EXPECT_EQ(o.relay_pace, 80);
  EXPECT_FALSE(parse({"--relay-pace", "101"}, o, err));
  EXPECT_NE(err.find("--relay-pace"), std::string::npos) << err;
}

TEST(Cli, UsageNamesEveryFlag) {
  const std::string usage = oddsrelay::usage();
  for (const char* flag : {"--listen", "--feed", "--capture", "--data-dir", "--keys", "--catalog", "--progress",
                           "--exit-after-replay", "--stream-sports", "--help"})
    EXPECT_NE(usage.find(flag), std::string::npos) << flag;
  for (const IntFlag& f : kIntFlags) EXPECT_NE(usage.find(f.name), std::string::npos) << f.name;
}

// --help and the parser read one table: every flag --help lists is one the
// parser knows, and a switch takes no value while every other flag needs one.
TEST(Cli, EveryFlagInHelpIsParsed) {
  const std::string text = usage();
  int flags = 0;
  for (size_t at = text.find("\n  --"); at != std::string::npos; at = text.find("\n  --", at + 1)) {
    std::string flag = text.substr(at + 3, text.find_first_of(" \n", at + 3) - at - 3);
    Options o;
    std::string err;
    bool ok = parse({flag.c_str()}, o, err);
    EXPECT_EQ(err.find("unknown option"), std::string::npos) << flag << ": " << err;
    if (!ok) {
      EXPECT_EQ(err, flag + " needs a value");
    }
    ++flags;
  }
  EXPECT_GT(flags, 40);
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
  EXPECT_EQ(d.publish_replicas, 1);  // the defaults --help and the README state
  EXPECT_EQ(d.bus_stale_after_ms, 1000);
  Options c;
  ASSERT_TRUE(parse({"--publish", "nats://a:1,b:2,c:3/S", "--publish-replicas", "3"}, c, err)) << err;
  EXPECT_EQ(c.publish_replicas, 3);
  Options e;
  ASSERT_TRUE(parse({"--feed", "nats://a:1,nats://b:2/S", "--bus-stale-after", "500"}, e, err)) << err;
  EXPECT_EQ(e.bus_stale_after_ms, 500);
  for (std::vector<const char*> bad : {
           std::vector<const char*>{"--feed", "nats://h:1"},      // no stream
           std::vector<const char*>{"--feed", "nats://h:1/A.B"},  // not a stream name
           std::vector<const char*>{"--publish", "http://h:1/S"},
           std::vector<const char*>{"--publish-max-bytes", "12X"},
           std::vector<const char*>{"--publish-max-bytes", "1K"},                  // under 1M
           std::vector<const char*>{"--feed", "nats://h:1/S", "--data-dir", "d"},  // an edge's log is the bus
           std::vector<const char*>{"--feed", "nats://h:1/S", "--publish", "nats://h:1/T"},
           std::vector<const char*>{"--publish", "nats://127.0.0.1:27221,/ODDS"},  // a stray comma
           std::vector<const char*>{"--feed", "nats://a:1,,b:2/S"},
           std::vector<const char*>{"--feed", "nats://a:1,b:x/S"},
           std::vector<const char*>{"--publish-replicas", "0"},
           std::vector<const char*>{"--publish-replicas", "6"},
           std::vector<const char*>{"--bus-stale-after", "10"},
       }) {
    Options b;
    err.clear();
    EXPECT_FALSE(parse(bad, b, err)) << bad[0] << " " << bad[1];
    EXPECT_FALSE(err.empty());
    EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  }
}

TEST(Cli, MetricsListen) {
  Options o;
  std::string err;
  ASSERT_TRUE(parse({}, o, err));
  EXPECT_EQ(o.metrics_port, 0);  // default: /metrics on the main listener
  ASSERT_TRUE(parse({"--listen", "127.0.0.1:8080", "--metrics-listen", "127.0.0.1:9464"}, o, err)) << err;
  EXPECT_EQ(o.metrics_host, "127.0.0.1");
  EXPECT_EQ(o.metrics_port, 9464);
  EXPECT_EQ(o.port, 8080);
  ASSERT_TRUE(parse({"--metrics-listen=0.0.0.0:8080", "--listen", "127.0.0.1:8080"}, o, err)) << err;
  EXPECT_EQ(o.metrics_host, "0.0.0.0");
  for (const char* bad : {"9464", "h:0", "h:70000", ":80", "h:"})
    expect_refused({"--metrics-listen", bad}, std::string("bad --metrics-listen '") + bad + "'");
  expect_refused({"--metrics-listen"}, "--metrics-listen needs a value");
  expect_refused({"--listen", "127.0.0.1:9000", "--metrics-listen", "127.0.0.1:9000"},
                 "--metrics-listen must differ from --listen");
  EXPECT_NE(usage().find("--metrics-listen HOST:PORT"), std::string::npos);
}

TEST(Cli, HttpThreadsDefaultIsHalfTheCoresFromOneToFour) {
  EXPECT_EQ(default_http_threads(0), 1);  // unknown
  EXPECT_EQ(default_http_threads(1), 1);
  EXPECT_EQ(default_http_threads(2), 1);
  EXPECT_EQ(default_http_threads(5), 2);
  EXPECT_EQ(default_http_threads(8), 4);
  EXPECT_EQ(default_http_threads(64), 4);
  Options o;
  std::string err;
  ASSERT_TRUE(parse({"--http-threads", "3"}, o, err)) << err;
  EXPECT_EQ(o.http_threads, 3);
}

}  // namespace oddsrelay

namespace oddsrelay {
namespace {

TEST(Cli, TrustProxyAndPublicUrl) {
  Options o;
  std::string err;
  ASSERT_TRUE(parse({}, o, err));
  EXPECT_TRUE(o.trust_proxy.empty());  // nothing trusted unless asked
  EXPECT_FALSE(o.public_url.set());
  ASSERT_TRUE(parse({"--trust-proxy", "127.0.0.1/32,10.0.0.0/8", "--public-url=https://odds.example.com/"}, o, err))
      << err;
  EXPECT_EQ(o.trust_proxy.size(), 2u);
  EXPECT_TRUE(o.trust_proxy.contains(*rest::parse_ip("10.1.2.3")));
  EXPECT_FALSE(o.trust_proxy.contains(*rest::parse_ip("127.0.0.2")));
  EXPECT_EQ(o.public_url.base, "https://odds.example.com");
  Options p;
  EXPECT_FALSE(parse({"--trust-proxy", "10.0.0.0/8,proxy"}, p, err));
  EXPECT_EQ(err, "bad --trust-proxy: 'proxy' is not an address or CIDR (CIDR[,CIDR], e.g. 127.0.0.1/32,10.0.0.0/8)");
  EXPECT_FALSE(parse({"--public-url", "odds.example.com"}, p, err));
  EXPECT_EQ(err,
            "bad --public-url: 'odds.example.com' is not an http:// or https:// URL (scheme://host[:port][/path])");
  EXPECT_FALSE(parse({"--trust-proxy"}, p, err));
  EXPECT_EQ(err, "--trust-proxy needs a value");
  const std::string usage = oddsrelay::usage();
  EXPECT_NE(usage.find("--trust-proxy CIDR[,CIDR]"), std::string::npos);
  EXPECT_NE(usage.find("--public-url URL"), std::string::npos);
}

}  // namespace
}  // namespace oddsrelay
