// The bus contract (protocol/bus_contract.h) and the position check every
// reader of the log applies (engine/bus/log_reader.h fit): what an adapter in any
// language must produce, and what an edge accepts.
#include "protocol/bus_contract.h"

#include <gtest/gtest.h>

#include "engine/bus/log_reader.h"

namespace oddsrelay::bus {
namespace {

TEST(BusUrl, ParsesHostPortStream) {
  BusUrl u;
  std::string err;
  ASSERT_TRUE(parse_bus_url("nats://127.0.0.1:4333/ODDS_1-a", u, err)) << err;
  ASSERT_EQ(u.servers.size(), 1u);
  EXPECT_EQ(u.servers[0].host, "127.0.0.1");
  EXPECT_EQ(u.servers[0].port, 4333);
  EXPECT_EQ(u.stream, "ODDS_1-a");
  EXPECT_EQ(u.server(), "nats://127.0.0.1:4333");
  EXPECT_EQ(u.str(), "nats://127.0.0.1:4333/ODDS_1-a");
  ASSERT_TRUE(parse_bus_url("nats://bus.local/S", u, err)) << err;
  EXPECT_EQ(u.servers[0].port, 4222);
  for (const char* bad : {"http://h:1/S", "nats://h:1", "nats://h:1/", "nats://h:0/S", "nats://h:70000/S",
                          "nats://:1/S", "nats://h:1/A.B", "nats://h:1/A*", "nats://h:x/S"}) {
    EXPECT_FALSE(parse_bus_url(bad, u, err)) << bad;
    EXPECT_FALSE(err.empty()) << bad;
  }
}

// A cluster as operators write it: every server, in the order to try.
TEST(BusUrl, ParsesAServerList) {
  BusUrl u;
  std::string err;
  ASSERT_TRUE(parse_bus_url("nats://127.0.0.1:27221,127.0.0.1:27222,bus3/ODDS", u, err)) << err;
  ASSERT_EQ(u.servers.size(), 3u);
  EXPECT_EQ(u.servers[0].url(), "nats://127.0.0.1:27221");
  EXPECT_EQ(u.servers[1].url(), "nats://127.0.0.1:27222");
  EXPECT_EQ(u.servers[2].url(), "nats://bus3:4222");
  EXPECT_EQ(u.stream, "ODDS");
  EXPECT_EQ(u.str(), "nats://127.0.0.1:27221,127.0.0.1:27222,bus3:4222/ODDS");
  EXPECT_EQ(u.server(), "nats://127.0.0.1:27221,nats://127.0.0.1:27222,nats://bus3:4222");
  EXPECT_EQ(u.server_urls(),
            (std::vector<std::string>{"nats://127.0.0.1:27221", "nats://127.0.0.1:27222", "nats://bus3:4222"}));
  // Each server may carry the scheme again; IPv6 in brackets.
  ASSERT_TRUE(parse_bus_url("nats://h1:1,nats://h2:2,[::1]:3,[::1]/S", u, err)) << err;
  ASSERT_EQ(u.servers.size(), 4u);
  EXPECT_EQ(u.servers[1].url(), "nats://h2:2");
  EXPECT_EQ(u.servers[2].url(), "nats://[::1]:3");
  EXPECT_EQ(u.servers[3].url(), "nats://[::1]:4222");
}

// What used to be read as one host "h1:1,h2" on port 2 (and published
// nothing) is refused with a reason, and a failed parse leaves `out` alone.
TEST(BusUrl, RefusesMalformedServerLists) {
  BusUrl u;
  std::string err;
  ASSERT_TRUE(parse_bus_url("nats://keep:9/K", u, err));
  for (const char* bad :
       {"nats://h1:1,/S", "nats://,h1:1/S", "nats://h1:1,,h2:2/S", "nats://h1:1,h2:x/S", "nats://h1:1,h2:/S",
        "nats://h1:1,h1:1/S", "nats://h1:1,h2:2", "nats://h1:1 h2:2/S", "nats://h1:1;h2:2/S", "nats://h1:1,nats:///S",
        "nats://h1:1,:2/S", "nats://[::1/S", "nats://[::1]x/S", "nats://h1:1:2/S", "nats://h1:1/A/B"}) {
    err.clear();
    EXPECT_FALSE(parse_bus_url(bad, u, err)) << bad;
    EXPECT_FALSE(err.empty()) << bad;
  }
  EXPECT_EQ(u.str(), "nats://keep:9/K");
}

TEST(BusContract, SubjectsAndStreams) {
  EXPECT_EQ(log_subject("ODDS"), "ODDS.log");
  EXPECT_EQ(snapshot_stream("ODDS"), "ODDS_SNAP");
  EXPECT_EQ(snapshot_subjects("ODDS"), "ODDS.snap.>");
  EXPECT_EQ(snapshot_subject("ODDS", 42), "ODDS.snap.42");
  EXPECT_EQ(head_subject("ODDS"), "ODDS.snap.head");
}

TEST(BusContract, MsgIdIsEpochColonLastPosition) {
  EXPECT_EQ(msg_id("1c449176dc1d", 18416), "1c449176dc1d:18416");
  std::string e;
  uint64_t s = 0;
  ASSERT_TRUE(parse_msg_id("1c449176dc1d:18416", e, s));
  EXPECT_EQ(e, "1c449176dc1d");
  EXPECT_EQ(s, 18416u);
  for (const char* bad : {"", "abc", ":5", "e:", "e:0", "e:-1", "e:5x", "a:b:5"})
    EXPECT_FALSE(parse_msg_id(bad, e, s)) << bad;
}

TEST(BusContract, LinesOfAMessage) {
  std::vector<std::string> got;
  for_each_line("{\"a\":1}\n\n  \n{\"b\":2}\r\n{\"c\":3}", [&](std::string_view l) { got.emplace_back(l); });
  EXPECT_EQ(got, (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}", "{\"c\":3}"}));
  EXPECT_EQ(count_lines("x\ny\n"), 2u);
  EXPECT_EQ(count_lines(""), 0u);
}

TEST(BusContract, HeadRoundTripsAndRefusesMissingFields) {
  SnapshotHead h{"e1", 500, 17, 3, 2, 700000, 40, xxh_hex("data")};
  EXPECT_EQ(h.xxh.size(), 16u);
  SnapshotHead back;
  std::string err;
  ASSERT_TRUE(parse_head(encode_head(h), back, err)) << err;
  EXPECT_EQ(encode_head(back), encode_head(h));
  EXPECT_EQ(back.seq, 500u);
  EXPECT_EQ(back.stream_seq, 17u);
  EXPECT_EQ(back.chunks, 2u);
  EXPECT_FALSE(parse_head("{}", back, err));
  EXPECT_FALSE(parse_head("not json", back, err));
  std::string zero_chunks = encode_head(h);
  zero_chunks.replace(zero_chunks.find("\"chunks\":2"), 10, "\"chunks\":0");
  EXPECT_FALSE(parse_head(zero_chunks, back, err));
}

LogMessage msg(const std::string& epoch, uint64_t last, uint64_t records) {
  LogMessage m;
  m.epoch = epoch;
  m.last = last;
  m.records = records;
  return m;
}

TEST(LogFit, OnlyTheExactContinuationIsApplied) {
  EXPECT_EQ(fit(msg("e", 10, 3), "e", 7), Fit::Next);  // positions 8..10 after 7
  EXPECT_EQ(fit(msg("e", 1, 1), "e", 0), Fit::Next);
  EXPECT_EQ(fit(msg("e", 7, 3), "e", 7), Fit::Old);  // already applied (a resend)
  EXPECT_EQ(fit(msg("e", 5, 2), "e", 7), Fit::Old);
  EXPECT_EQ(fit(msg("e", 12, 3), "e", 7), Fit::Gap);  // 10..12: 8 and 9 missing
  EXPECT_EQ(fit(msg("e", 9, 3), "e", 7), Fit::Gap);   // 7..9 overlaps: not a continuation
  EXPECT_EQ(fit(msg("f", 10, 3), "e", 7), Fit::OtherLog);
  EXPECT_EQ(fit(msg("", 10, 3), "e", 7), Fit::Bad);   // no Nats-Msg-Id
  EXPECT_EQ(fit(msg("e", 10, 0), "e", 7), Fit::Bad);  // no records
  EXPECT_EQ(fit(msg("e", 2, 3), "e", 0), Fit::Bad);   // more records than positions
}

}  // namespace
}  // namespace oddsrelay::bus
