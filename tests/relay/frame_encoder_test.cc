// Frames as subscribers see them: WebSocket header, 0x1F fields, JSON
// bodies in the shapes docs/api.md gives (null for removals).
#include "relay/frame_encoder.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "protocol/relay_frame.h"
#include "tests/test_util.h"

namespace oddsrelay::relay {
namespace {

using test::L;

// The payload of a single unmasked server frame, checking its header.
std::string payload(const FrameRef& f, ws::Opcode op = ws::kText) {
  std::string_view b = f->bytes();
  EXPECT_GE(b.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(b[0]), 0x80 | op);
  size_t len = static_cast<unsigned char>(b[1]) & 0x7f, head = 2;
  EXPECT_EQ(static_cast<unsigned char>(b[1]) & 0x80, 0);  // servers never mask
  if (len == 126) {
    len = (static_cast<unsigned char>(b[2]) << 8) | static_cast<unsigned char>(b[3]);
    head = 4;
  } else if (len == 127) {
    len = 0;
    for (int i = 2; i < 10; ++i) len = (len << 8) | static_cast<unsigned char>(b[i]);
    head = 10;
  }
  EXPECT_EQ(b.size(), head + len);
  return std::string(b.substr(head));
}

rapidjson::Document body_of(const std::string& frame, std::string_view type, std::string_view channel) {
  auto rf = parse_relay_frame(frame);
  EXPECT_TRUE(rf.has_value());
  rapidjson::Document d;
  if (!rf) return d;
  EXPECT_EQ(rf->type, type);
  EXPECT_EQ(rf->channel, channel);
  d.Parse(rf->body.data(), rf->body.size());
  EXPECT_FALSE(d.HasParseError()) << rf->body;
  return d;
}

class FrameEncoderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine.set_epoch("ep0123");
    test::apply_all(engine,
                    {test::event(1000, "s7-1.501", 1, true),
                     test::market(1001, "s7-1.501", 1001, {{"s", 0, {{2001, 150, 0}, {2002, 300, 0}, {2003, 500, 0}}}}),
                     test::market(1002, "s7-1.501", 1007, {{"s2.5", 1, {{2101, 190, 0}, {2102, 185, 0}}}})});
  }
  Engine engine;
};

TEST_F(FrameEncoderTest, OddsFrameCarriesWholeMarketsAndNullForRemoved) {
  SnapshotPtr s = engine.current();
  const EventEntry* e = s->events.find(501);
  ASSERT_NE(e, nullptr);
  uint32_t ids[] = {1001, 1099};
  auto d = body_of(payload(pt_odds(*e, 1, ids)), "P", "odds:1:501");
  ASSERT_TRUE(d.IsObject());
  ASSERT_TRUE(d.HasMember("1001"));
  EXPECT_EQ(d["1001"]["s"]["2001"][0].GetInt(), 150);
  EXPECT_TRUE(d["1001"]["s"]["2001"][2].IsNull());
  EXPECT_TRUE(d["1099"].IsNull());
  EXPECT_FALSE(d.HasMember("1007"));
  auto full = body_of(payload(pt_odds(*e, 1, {})), "P", "odds:1:501");
  EXPECT_TRUE(full.HasMember("1001"));
  EXPECT_STREQ(full["1007"]["s2.5"]["2101"][2].GetString(), "2.5");
  EXPECT_EQ(full["1007"]["s2.5"]["s"].GetInt(), 1);
}

TEST_F(FrameEncoderTest, EventFrameMapsIdsToObjectsOrNull) {
  SnapshotPtr s = engine.current();
  const EventEntry* e = s->events.find(501);
  EventItem items[] = {{e->key, e}, {"s7-1.999", nullptr}};
  auto d = body_of(payload(pt_events(1, items)), "P", "evt:1");
  ASSERT_TRUE(d.HasMember("s7-1.501"));
  EXPECT_TRUE(d["s7-1.501"]["live"].GetBool());
  EXPECT_EQ(d["s7-1.501"]["sport"].GetInt(), 1);
  EXPECT_TRUE(d["s7-1.999"].IsNull());
}

TEST_F(FrameEncoderTest, InfoFramesCarrySeqAndConflation) {
  auto d = body_of(payload(pt_marker(42, 40, 1234)), "INFO", "PUB");
  EXPECT_EQ(d["seq"].GetUint64(), 42u);
  EXPECT_EQ(d["from"].GetUint64(), 40u);
  EXPECT_EQ(d["at"].GetInt64(), 1234);
  EXPECT_FALSE(d.HasMember("conflated"));
  auto c = body_of(payload(pt_marker(43, 43, 1235, 3)), "INFO", "PUB");
  EXPECT_EQ(c["conflated"].GetUint64(), 3u);
  int32_t sports[] = {1, 2};
  auto r = body_of(payload(pt_ready(*engine.current(), sports, 3)), "INFO", "PUB");
  EXPECT_TRUE(r["ready"].GetBool());
  EXPECT_EQ(r["seq"].GetUint64(), engine.current()->seq);
  EXPECT_EQ(r["sports"].Size(), 2u);
  EXPECT_EQ(r["channels"].Size(), 2u);
  EXPECT_STREQ(r["epoch"].GetString(), "ep0123");
  EXPECT_FALSE(r.HasMember("resumed"));  // no resume asked: no resume fields
  auto ok = body_of(payload(pt_ready(*engine.current(), sports, 3, {true, true, {}})), "INFO", "PUB");
  EXPECT_TRUE(ok["resumed"].GetBool());
  EXPECT_FALSE(ok.HasMember("reason"));
  auto no = body_of(payload(pt_ready(*engine.current(), sports, 1, {true, false, "too_old"})), "INFO", "PUB");
  EXPECT_FALSE(no["resumed"].GetBool());
  EXPECT_STREQ(no["reason"].GetString(), "too_old");
  EXPECT_EQ(no["channels"].Size(), 1u);
  EXPECT_FALSE(no.HasMember("frames"));  // no snapshot note: no count
  auto snap = body_of(payload(pt_ready(*engine.current(), sports, 3, {}, {0, 0xabcdefull})), "INFO", "PUB");
  EXPECT_EQ(snap["frames"].GetUint64(), 0u);  // an empty snapshot still says so
  EXPECT_STREQ(snap["digest"].GetString(), "0000000000abcdef");
}

TEST_F(FrameEncoderTest, WsMessages) {
  SnapshotPtr s = engine.current();
  rapidjson::Document d;
  std::string p = payload(ws_snapshot(*s));
  d.Parse(p.c_str());
  EXPECT_STREQ(d["type"].GetString(), "snapshot");
  EXPECT_TRUE(d["live"].HasMember("s7-1.501"));
  EXPECT_EQ(d["prematch"].MemberCount(), 0u);
  EXPECT_EQ(d["seq"].GetUint64(), s->seq);
  EXPECT_STREQ(d["epoch"].GetString(), "ep0123");
  EXPECT_FALSE(d.HasMember("resumed"));
  p = payload(ws_snapshot(*s, true, {true, false, "other_epoch"}));
  d.Parse(p.c_str());
  EXPECT_FALSE(d["resumed"].GetBool());
  EXPECT_STREQ(d["reason"].GetString(), "other_epoch");
  EXPECT_TRUE(d["live"].HasMember("s7-1.501"));
  p = payload(ws_resumed(*s, 4));
  d.Parse(p.c_str());
  EXPECT_STREQ(d["type"].GetString(), "resumed");
  EXPECT_EQ(d["seq"].GetUint64(), s->seq);
  EXPECT_STREQ(d["epoch"].GetString(), "ep0123");
  EXPECT_EQ(d["changed"].GetUint64(), 4u);
  const EventEntry* e = s->events.find(501);
  EventItem items[] = {{e->key, e}, {"s7-1.999", nullptr}};
  p = payload(ws_live_update(9, 55, items));
  d.Parse(p.c_str());
  EXPECT_STREQ(d["type"].GetString(), "live_update");
  EXPECT_EQ(d["seq"].GetUint64(), 55u);
  EXPECT_TRUE(d["data"]["s7-1.999"].IsNull());
  uint32_t mk[] = {1001};
  p = payload(ws_subscribed("s7-1.501", mk, 56));
  d.Parse(p.c_str());
  EXPECT_EQ(d["seq"].GetUint64(), 56u);
  EXPECT_STREQ(d["markets"][0].GetString(), "1001");
  p = payload(ws_error("Event not found", 57));
  d.Parse(p.c_str());
  EXPECT_STREQ(d["error"].GetString(), "Event not found");
  EXPECT_EQ(d["seq"].GetUint64(), 57u);
  p = payload(ws_market(*s->events.find(501), 1001, 5, 77));
  d.Parse(p.c_str());
  EXPECT_STREQ(d["type"].GetString(), "market");
  EXPECT_EQ(d["seq"].GetUint64(), 77u);
  EXPECT_STREQ(d["market"].GetString(), "1001");
  EXPECT_EQ(d["outcomes"]["s"]["2003"][0].GetInt(), 500);
  EXPECT_STREQ(d["event_id"].GetString(), "s7-1.501");
  EXPECT_EQ(d["ts"].GetInt64(), 5);
  p = payload(ws_market(*s->events.find(501), 1004, 6, 78));  // not a market of the event
  d.Parse(p.c_str());
  EXPECT_STREQ(d["market"].GetString(), "1004");
  EXPECT_TRUE(d["outcomes"].IsNull());
  // An event no longer in the state: named by its old key, outcomes null.
  p = payload(ws_market_removed("s7-1.777", 1001, 7, 79));
  EXPECT_EQ(p, R"({"type":"market","event_id":"s7-1.777","market":"1001","ts":7,"seq":79,"outcomes":null})");
}

TEST(FrameHeader, LongPayloadsUseExtendedLengths) {
  std::string big(70000, 'x');
  EXPECT_EQ(payload(text_frame(big)).size(), 70000u);
  std::string mid(300, 'y');
  EXPECT_EQ(payload(text_frame(mid)), mid);
  EXPECT_EQ(payload(control_frame(ws::kPong, "hi"), ws::kPong), "hi");
  EXPECT_EQ(raw_bytes("HTTP/1.1 101")->bytes(), "HTTP/1.1 101");
}

}  // namespace
}  // namespace oddsrelay::relay
