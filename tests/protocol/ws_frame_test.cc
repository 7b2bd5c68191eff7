#include "protocol/ws_frame.h"

#include <gtest/gtest.h>

#include <vector>

#include "protocol/relay_frame.h"
#include "tests/protocol/ws_client_frame.h"

namespace oddsrelay::ws {
namespace {

using test::client_frame;

struct Recorder {
  std::vector<std::pair<Opcode, std::string>> messages;
  std::vector<std::string> pings, pongs;
  int close_code = -1;
  std::string close_reason;
  int error = 0;
  void on_message(Opcode op, std::string_view p) { messages.emplace_back(op, std::string(p)); }
  void on_ping(std::string_view p) { pings.emplace_back(p); }
  void on_pong(std::string_view p) { pongs.emplace_back(p); }
  void on_close(uint16_t c, std::string_view r) {
    close_code = c;
    close_reason = r;
  }
  void on_error(uint16_t c, const char*) { error = c; }
};

Recorder run(std::string bytes, size_t max_message = 64 * 1024) {
  FrameParser p(max_message);
  Recorder r;
  p.feed(bytes.data(), bytes.size(), r);
  return r;
}

}  // namespace

TEST(WsFrame, AcceptKeyFromTheRfcExample) {
  EXPECT_EQ(accept_key("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");  // RFC 6455 1.3
  EXPECT_EQ(accept_key("short"), "");
  EXPECT_EQ(accept_key("!!!!!!!!!!!!!!!!!!!!!!=="), "");  // 24 characters, not base64
  EXPECT_EQ(accept_key("dGhlIHNhbXBsZSBub25jZ\xc3=="), "");
  EXPECT_EQ(accept_key("dGhlIHNhbXBsZSBub25j ZQ=="), "");
}

TEST(WsFrame, UnmasksTextBinaryPingPong) {
  Recorder r = run(client_frame(0x81, "hello") + client_frame(0x82, std::string("\0\1\2", 3)) +
                   client_frame(0x89, "p") + client_frame(0x8a, "q"));
  EXPECT_EQ(r.error, 0);
  ASSERT_EQ(r.messages.size(), 2u);
  EXPECT_EQ(r.messages[0], std::make_pair(kText, std::string("hello")));
  EXPECT_EQ(r.messages[1].first, kBinary);
  EXPECT_EQ(r.pings, std::vector<std::string>{"p"});
  EXPECT_EQ(r.pongs, std::vector<std::string>{"q"});
}

TEST(WsFrame, ExtendedLengths) {
  std::string mid(300, 'm'), big(70000, 'b');
  Recorder r = run(client_frame(0x81, mid) + client_frame(0x82, big), 100000);
  ASSERT_EQ(r.messages.size(), 2u);
  EXPECT_EQ(r.messages[0].second, mid);
  EXPECT_EQ(r.messages[1].second, big);
}

TEST(WsFrame, WaitsForWholeFramesByteByByte) {
  std::string all = client_frame(0x81, std::string(200, 'x')) + client_frame(0x89, "ping");
  FrameParser p;
  Recorder r;
  std::string buf;
  for (char c : all) {
    buf += c;
    size_t used = p.feed(buf.data(), buf.size(), r);
    buf.erase(0, used);
  }
  EXPECT_TRUE(buf.empty());
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(r.messages[0].second.size(), 200u);
  EXPECT_EQ(r.pings.size(), 1u);
}

TEST(WsFrame, FragmentsWithInterleavedControlFrames) {
  Recorder r = run(client_frame(0x01, "frag") + client_frame(0x89, "mid-ping") + client_frame(0x00, "men") +
                   client_frame(0x80, "ted"));
  EXPECT_EQ(r.error, 0);
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(r.messages[0], std::make_pair(kText, std::string("fragmented")));
  EXPECT_EQ(r.pings.size(), 1u);
}

TEST(WsFrame, UnmaskedClientFrameIs1002) { EXPECT_EQ(run(client_frame(0x81, "x", false)).error, kProtocolError); }

TEST(WsFrame, ReservedBitsAndUnknownOpcodesAre1002) {
  EXPECT_EQ(run(client_frame(0xc1, "x")).error, kProtocolError);  // RSV1
  EXPECT_EQ(run(client_frame(0x83, "x")).error, kProtocolError);  // opcode 3
  EXPECT_EQ(run(client_frame(0x8b, "x")).error, kProtocolError);  // opcode 11
}

TEST(WsFrame, ControlFramesMustBeWholeAndSmall) {
  EXPECT_EQ(run(client_frame(0x09, "x")).error, kProtocolError);                    // fragmented ping
  EXPECT_EQ(run(client_frame(0x89, std::string(126, 'x'))).error, kProtocolError);  // 126 bytes
  EXPECT_EQ(run(client_frame(0x89, std::string(125, 'x'))).error, 0);
}

TEST(WsFrame, ContinuationRules) {
  EXPECT_EQ(run(client_frame(0x80, "x")).error, kProtocolError);                            // nothing to continue
  EXPECT_EQ(run(client_frame(0x01, "a") + client_frame(0x81, "b")).error, kProtocolError);  // new message mid-way
}

TEST(WsFrame, MessageSizeLimitIs1009) {
  EXPECT_EQ(run(client_frame(0x81, std::string(101, 'x')), 100).error, kMessageTooBig);
  EXPECT_EQ(run(client_frame(0x01, std::string(60, 'x')) + client_frame(0x80, std::string(60, 'x')), 100).error,
            kMessageTooBig);  // the fragments add up
}

TEST(WsFrame, InvalidUtf8TextIs1007) {
  EXPECT_EQ(run(client_frame(0x81, "\xc3\x28")).error, kInvalidPayload);
  EXPECT_EQ(run(client_frame(0x01, "\xe2\x82") + client_frame(0x80, "\xac")).error, 0);  // split across fragments
  EXPECT_EQ(run(client_frame(0x82, "\xc3\x28")).error, 0);                               // binary is not checked
}

TEST(WsFrame, CloseFrames) {
  Recorder r = run(client_frame(0x88, std::string("\x03\xe8", 2) + "bye") + client_frame(0x81, "after"));
  EXPECT_EQ(r.close_code, 1000);
  EXPECT_EQ(r.close_reason, "bye");
  EXPECT_TRUE(r.messages.empty());  // nothing after close
  EXPECT_EQ(run(client_frame(0x88, "")).close_code, kNoStatus);
  EXPECT_EQ(run(client_frame(0x88, "\x03")).error, kProtocolError);                      // one byte
  EXPECT_EQ(run(client_frame(0x88, std::string("\x03\xed", 2))).error, kProtocolError);  // 1005 on the wire
  EXPECT_EQ(run(client_frame(0x88, std::string("\x0b\xb8", 2))).close_code, 3000);
  EXPECT_EQ(run(client_frame(0x88, std::string("\x03\xe8\xff", 3))).error, kInvalidPayload);
}

TEST(WsFrame, ServerFramesRoundTripThroughTheHeaderRules) {
  for (size_t n : {0, 125, 126, 65535, 65536}) {
    std::string out;
    append_frame(out, kText, std::string(n, 'a'));
    EXPECT_EQ(out.size(), frame_header_size(n) + n);
    EXPECT_EQ(static_cast<unsigned char>(out[0]), 0x81);
    EXPECT_EQ(static_cast<unsigned char>(out[1]) & 0x80, 0);  // never masked
  }
  std::string close;
  append_close(close, kPolicyViolation, std::string(200, 'r'));
  EXPECT_EQ(close.size(), 2u + 125u);
  EXPECT_EQ(static_cast<unsigned char>(close[2]), 1008 >> 8);
}

TEST(Utf8, Validation) {
  EXPECT_TRUE(valid_utf8("plain ascii"));
  EXPECT_TRUE(valid_utf8("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"));  // é € 😀
  EXPECT_FALSE(valid_utf8("\xc0\xaf"));                             // overlong
  EXPECT_FALSE(valid_utf8("\xed\xa0\x80"));                         // surrogate
  EXPECT_FALSE(valid_utf8("\xf4\x90\x80\x80"));                     // above U+10FFFF
  EXPECT_FALSE(valid_utf8("\xe2\x82"));                             // truncated
  EXPECT_FALSE(valid_utf8("\x80"));                                 // lone continuation
}

TEST(RelayFrame, EncodeAndParse) {
  std::string f;
  relay::append_relay_frame(f, "P", "odds:1:10000001", R"({"1001":{}})");
  EXPECT_EQ(f, "P\x1Fodds:1:10000001\x1F{\"1001\":{}}");
  auto p = relay::parse_relay_frame(f);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->type, "P");
  EXPECT_EQ(p->channel, "odds:1:10000001");
  EXPECT_EQ(p->body, R"({"1001":{}})");
  EXPECT_FALSE(relay::parse_relay_frame("P\x1F\x1F{}"));
  EXPECT_FALSE(relay::parse_relay_frame("no separators"));
}

}  // namespace oddsrelay::ws
