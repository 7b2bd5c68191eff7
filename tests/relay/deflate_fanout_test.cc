// permessage-deflate in one loop's fan-out (relay/outbox.h,
// relay/deflated_frame.h): a stream that negotiated it gets each data
// frame of at least ws::kDeflateMinPayload bytes compressed (RSV1 set,
// inflating alone to the uncompressed frame), smaller frames as they are;
// the compressed copy is made once per frame for the loop and the very
// same bytes go to every stream of every bucket that sends that frame.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "protocol/ws_deflate.h"
#include "tests/relay/fanout_fixture.h"

namespace oddsrelay::relay {
namespace {

struct Sent {
  std::vector<std::string> frames;  // whole frames, header included
  std::vector<const char*> where;   // their bytes' addresses
};

Sent sent(StreamConn& c) {
  Sent s;
  c.q.take([&](std::string_view b) {
    s.frames.emplace_back(b);
    s.where.push_back(b.data());
  });
  return s;
}

// The payload as the client reads it: inflated when RSV1 is set.
std::string message(const std::string& frame) {
  const std::string p = payload(frame);
  if (!(static_cast<unsigned char>(frame[0]) & ws::kRsv1)) return p;
  ws::Inflater inf;
  std::string out;
  EXPECT_EQ(inf.inflate(p, 1 << 20, out), ws::Inflater::Result::Ok);
  return out;
}

struct DeflateFanout : Fanout {
  StreamConn* deflating(std::vector<uint32_t> markets = {}) {
    StreamConn* c = stream(kAll, {}, {}, std::move(markets));
    c->deflate = true;
    return c;
  }
  // Event 7 goes live with 30 markets (a large odds frame), event 8 with one.
  void big_and_small() {
    std::vector<feed::Record> recs{test::event(1000, "7", 1, true), test::event(1000, "8", 1, true)};
    for (uint32_t m = 1001; m <= 1030; ++m) recs.push_back(odds(1000, "7", m, 150));
    recs.push_back(odds(1000, "8", 1001, 170));
    fan_out(std::move(recs));
  }
};

TEST_F(DeflateFanout, LargeFramesGoCompressedAndInflateToTheSameText) {
  StreamConn* plain = stream(kAll);
  StreamConn* z = deflating();
  big_and_small();
  const Sent p = sent(*plain), d = sent(*z);
  ASSERT_EQ(p.frames.size(), d.frames.size());
  size_t compressed = 0;
  for (size_t i = 0; i < p.frames.size(); ++i) {
    EXPECT_EQ(static_cast<unsigned char>(p.frames[i][0]), 0x81);  // never for a stream without the extension
    const bool big = payload(p.frames[i]).size() >= ws::kDeflateMinPayload;
    EXPECT_EQ(static_cast<unsigned char>(d.frames[i][0]), big ? 0xc1 : 0x81) << i;
    EXPECT_EQ(message(d.frames[i]), payload(p.frames[i]));
    if (big) {
      ++compressed;
      EXPECT_LT(d.frames[i].size(), p.frames[i].size());
      if (p.frames[i].size() >= 1000) {
        EXPECT_LT(d.frames[i].size() * 2, p.frames[i].size());  // odds:1:7
      }
    } else {
      EXPECT_EQ(d.where[i], p.where[i]);  // the very frame, not a copy
    }
  }
  EXPECT_GE(compressed, 1u);  // odds:1:7 at least; odds:1:8 and the INFO are small
}

TEST_F(DeflateFanout, OneCompressionPerFrameWhateverTheNumberOfStreams) {
  std::vector<StreamConn*> all, cut;
  for (int i = 0; i < 3; ++i) all.push_back(deflating());
  for (int i = 0; i < 2; ++i) cut.push_back(deflating({1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009}));
  stream(kAll);  // a stream without the extension shares the uncompressed frames
  const uint64_t before = stats.frames_deflated.load();
  big_and_small();
  std::set<const char*> distinct;  // compressed frames, by where their bytes are
  size_t deliveries = 0;
  for (auto* streams : {&all, &cut}) {
    const Sent first = sent(*(*streams)[0]);
    for (size_t i = 0; i < first.frames.size(); ++i)
      if (static_cast<unsigned char>(first.frames[i][0]) & ws::kRsv1)
        distinct.insert(first.where[i]), deliveries += streams->size();
    for (size_t i = 1; i < streams->size(); ++i) EXPECT_EQ(sent(*(*streams)[i]).where, first.where);  // the same bytes
  }
  // At least odds:1:7 whole for the first bucket and cut to nine markets
  // for the second; one compression each, for five streams.
  EXPECT_GE(distinct.size(), 2u);
  EXPECT_EQ(stats.frames_deflated.load() - before, distinct.size());
  EXPECT_GE(deliveries, 5u * 2);
}

}  // namespace
}  // namespace oddsrelay::relay
