// permessage-deflate (protocol/ws_deflate.h): the offers accepted, the
// frames sent (RSV1, each message alone, trailing 00 00 ff ff removed) and
// the client messages inflated under the message limit, checked against
// zlib used directly.
#include "protocol/ws_deflate.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <vector>

#include "tests/protocol/ws_client_frame.h"

namespace oddsrelay::ws {
namespace {

using test::client_frame;

// What a client does with a compressed message: appends 00 00 ff ff and
// inflates it with a fresh raw stream (nothing kept from before).
std::string client_inflate(std::string_view in) {
  std::string data(in);
  data.append("\0\0\xff\xff", 4);
  z_stream z{};
  inflateInit2(&z, -15);
  std::string out(1 << 20, '\0');
  z.next_in = reinterpret_cast<Bytef*>(data.data());
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = ::inflate(&z, Z_SYNC_FLUSH);
  out.erase(out.size() - z.avail_out);  // erase: resize warns under LTO (ws_deflate.cc)
  inflateEnd(&z);
  return rc == Z_OK || rc == Z_STREAM_END ? out : "<error>";
}

// What a client sends: the message compressed alone, tail removed.
std::string client_deflate(std::string_view in) {
  z_stream z{};
  deflateInit2(&z, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, static_cast<uLong>(in.size())) + 16, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_SYNC_FLUSH);
  out.erase(out.size() - z.avail_out - 4);
  deflateEnd(&z);
  return out;
}

struct Received {
  std::vector<std::string> messages;
  int error = 0;
  void on_message(Opcode, std::string_view p) { messages.emplace_back(p); }
  void on_ping(std::string_view) {}
  void on_pong(std::string_view) {}
  void on_close(uint16_t, std::string_view) {}
  void on_error(uint16_t c, const char*) { error = c; }
};

Received parse(std::string bytes, bool negotiated = true) {
  Inflater inf;
  FrameParser p(64 * 1024);
  if (negotiated) p.set_inflater(&inf);
  Received r;
  p.feed(bytes.data(), bytes.size(), r);
  return r;
}

std::string odds_like(int n) {
  std::string s = "P\x1fodds:1:1001\x1f{";
  for (int i = 0; i < n; ++i) s += "\"" + std::to_string(1000 + i) + "\":{\"1\":[[215,0,\"\",1732550000]]},";
  s.back() = '}';
  return s;
}

}  // namespace

TEST(WsDeflate, OffersWeAcceptAndDecline) {
  EXPECT_TRUE(deflate_offer_acceptable("permessage-deflate"));
  EXPECT_TRUE(deflate_offer_acceptable("permessage-deflate; client_max_window_bits"));  // browsers, websockets, ws
  EXPECT_TRUE(deflate_offer_acceptable("Permessage-Deflate ; client_max_window_bits=10; server_no_context_takeover"));
  EXPECT_TRUE(deflate_offer_acceptable("x-webkit-deflate-frame, permessage-deflate; client_no_context_takeover"));
  EXPECT_TRUE(deflate_offer_acceptable("permessage-deflate; server_max_window_bits=10, permessage-deflate"));
  EXPECT_FALSE(deflate_offer_acceptable(""));
  EXPECT_FALSE(deflate_offer_acceptable("x-webkit-deflate-frame"));
  EXPECT_FALSE(deflate_offer_acceptable("permessage-deflate; server_max_window_bits=10"));
  EXPECT_FALSE(deflate_offer_acceptable("permessage-deflate; client_no_context_takeover; client_no_context_takeover"));
  EXPECT_FALSE(deflate_offer_acceptable("permessage-deflate; frobnicate"));
}

TEST(WsDeflate, RfcHelloExample) {
  // RFC 7692 7.2.3.1: "Hello" in one compressed frame.
  Deflater d;
  std::string frame;
  d.append_frame(frame, kText, "Hello");
  EXPECT_EQ(frame, std::string("\xc1\x07\xf2\x48\xcd\xc9\xc9\x07\x00", 9));
}

TEST(WsDeflate, FrameHasRsv1AndTheTailRemoved) {
  Deflater d;
  const std::string msg = odds_like(40);
  std::string frame;
  d.append_frame(frame, kText, msg);
  const auto b0 = static_cast<unsigned char>(frame[0]);
  EXPECT_EQ(b0, 0x80 | 0x40 | kText);  // FIN, RSV1, text
  const std::string_view payload = frame_payload(frame);
  EXPECT_EQ(payload.size() + frame_header_size(payload.size()), frame.size());
  ASSERT_GE(payload.size(), 4u);
  EXPECT_NE(payload.substr(payload.size() - 4), std::string_view("\0\0\xff\xff", 4));
  EXPECT_LT(payload.size() * 3, msg.size());
  EXPECT_EQ(client_inflate(payload), msg);
}

TEST(WsDeflate, NoContextTakeoverEachMessageAlone) {
  Deflater d;
  const std::string a = odds_like(30), b = odds_like(31);
  std::string ca, cb, ca2;
  d.compress(a, ca);
  d.compress(b, cb);
  d.compress(a, ca2);
  EXPECT_EQ(ca, ca2);  // nothing of b (or a) carried over
  // Each inflates with a fresh stream, in any order.
  EXPECT_EQ(client_inflate(cb), b);
  EXPECT_EQ(client_inflate(ca2), a);
  Inflater inf;
  std::string out;
  EXPECT_EQ(inf.inflate(cb, 1 << 20, out), Inflater::Result::Ok);
  EXPECT_EQ(out, b);
  EXPECT_EQ(inf.inflate(ca, 1 << 20, out), Inflater::Result::Ok);
  EXPECT_EQ(out, a);
}

TEST(WsDeflate, InflateLimitAppliesAfterInflation) {
  Inflater inf;
  std::string out;
  const std::string exact(1000, 'x');
  EXPECT_EQ(inf.inflate(client_deflate(exact), 1000, out), Inflater::Result::Ok);
  EXPECT_EQ(out, exact);
  EXPECT_EQ(inf.inflate(client_deflate(exact), 999, out), Inflater::Result::TooBig);
  const std::string bomb = client_deflate(std::string(10 << 20, '\0'));  // 10 MiB of zeros
  EXPECT_LT(bomb.size(), 64u * 1024);
  EXPECT_EQ(inf.inflate(bomb, 64 * 1024, out), Inflater::Result::TooBig);
  EXPECT_LE(out.size(), 64u * 1024);
  EXPECT_EQ(inf.inflate("\xff\xff\xff\xff garbage", 64 * 1024, out), Inflater::Result::Corrupt);
}

TEST(WsDeflate, ParserInflatesRsv1Messages) {
  const std::string text = "{\"subscribe\":{\"event_id\":\"1001\"}}";
  Received r = parse(client_frame(0xc1, client_deflate(text)) + client_frame(0x81, "plain"));
  EXPECT_EQ(r.error, 0);
  EXPECT_EQ(r.messages, (std::vector<std::string>{text, "plain"}));
  // Fragmented: RSV1 on the first frame only.
  const std::string c = client_deflate(text);
  r = parse(client_frame(0x41, c.substr(0, 5)) + client_frame(0x80, c.substr(5)));
  EXPECT_EQ(r.error, 0);
  EXPECT_EQ(r.messages, (std::vector<std::string>{text}));
}

TEST(WsDeflate, ParserRefusesWhatIsNotNegotiated) {
  const std::string c = client_deflate("hello");
  EXPECT_EQ(parse(client_frame(0xc1, c), false).error, kProtocolError);  // RSV1 without the extension
  EXPECT_EQ(parse(client_frame(0xa1, "x")).error, kProtocolError);       // RSV2
  EXPECT_EQ(parse(client_frame(0xc9, "x")).error, kProtocolError);       // RSV1 on a ping
  EXPECT_EQ(parse(client_frame(0x01, "he") + client_frame(0xc0, "llo")).error, kProtocolError);  // on a continuation
  EXPECT_EQ(parse(client_frame(0xc1, "\xff\xfe not deflate")).error, kInvalidPayload);
  EXPECT_EQ(parse(client_frame(0xc1, client_deflate("\xff\xfe"))).error, kInvalidPayload);  // not UTF-8 once inflated
}

TEST(WsDeflate, ParserClosesADeflateBombWith1009) {
  const std::string bomb = client_deflate(std::string(1 << 20, 'a'));
  ASSERT_LT(bomb.size(), 64u * 1024);
  Received r = parse(client_frame(0xc1, bomb));
  EXPECT_EQ(r.error, kMessageTooBig);
  EXPECT_TRUE(r.messages.empty());
  // Just under the limit passes.
  r = parse(client_frame(0xc1, client_deflate(std::string(64 * 1024, 'a'))));
  EXPECT_EQ(r.error, 0);
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(r.messages[0].size(), 64u * 1024);
}

}  // namespace oddsrelay::ws
