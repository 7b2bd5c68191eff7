// The send queue's rules: order kept, one write takes everything queued,
// odds conflation only while a write is in flight (newer frame appended,
// older one dropped and counted), the byte bound, and the final frame.
#include "relay/send_queue.h"

#include <gtest/gtest.h>

#include "relay/frame_encoder.h"

namespace oddsrelay::relay {
namespace {

FrameRef f(const std::string& s) { return text_frame(s); }

// The payloads a take() hands out (each frame is one text frame with a
// 2-byte header for these short payloads).
std::vector<std::string> take_all(SendQueue& q) {
  std::vector<std::string> out;
  q.take([&](std::string_view b) { out.emplace_back(b.substr(2)); });
  return out;
}

TEST(SendQueue, KeepsOrderAndTakesEverything) {
  SendQueue q(1 << 20);
  EXPECT_TRUE(q.push(f("a")));
  EXPECT_TRUE(q.push(f("b"), 7));
  EXPECT_TRUE(q.push(f("c"), 7));  // nothing in flight: no conflation
  EXPECT_EQ(take_all(q), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(q.in_flight());
  EXPECT_FALSE(q.has_queued());
  EXPECT_EQ(q.bytes(), 9u);
  q.written();
  EXPECT_EQ(q.bytes(), 0u);
  EXPECT_EQ(q.take_conflated(), 0u);
}

TEST(SendQueue, ConflatesAChannelWhileAWriteIsInFlight) {
  SendQueue q(1 << 20);
  q.push(f("x"));
  take_all(q);  // now a write is in flight
  q.push(f("odds7-v1"), 7);
  q.push(f("evt"));
  q.push(f("odds8-v1"), 8);
  q.push(f("odds7-v2"), 7);
  q.push(f("odds7-v3"), 7);
  EXPECT_EQ(q.take_conflated(), 2u);
  EXPECT_EQ(q.take_conflated(), 0u);  // reported once
  EXPECT_EQ(q.conflated_total(), 2u);
  q.written();
  // The newest frame of channel 7 comes after the frames queued before it.
  EXPECT_EQ(take_all(q), (std::vector<std::string>{"evt", "odds8-v1", "odds7-v3"}));
}

TEST(SendQueue, WillReplaceOnlyAFrameQueuedWhileAWriteIsInFlight) {
  SendQueue q(1 << 20);
  q.push(f("odds7-v0"), 7);
  EXPECT_FALSE(q.will_replace(7));  // nothing in flight: no conflation
  take_all(q);
  EXPECT_FALSE(q.will_replace(7));  // v0 is in flight, not queued
  q.push(f("odds7-v1"), 7);
  EXPECT_TRUE(q.will_replace(7));
  EXPECT_FALSE(q.will_replace(8));
  EXPECT_FALSE(q.will_replace(0));  // channel 0 never conflates
  q.written();
  take_all(q);  // v1 goes out: nothing queued is replaceable
  EXPECT_FALSE(q.will_replace(7));
}

TEST(SendQueue, EventFramesAreNeverConflated) {
  SendQueue q(1 << 20);
  q.push(f("x"));
  take_all(q);
  q.push(f("e1"));
  q.push(f("e2"));
  EXPECT_EQ(q.take_conflated(), 0u);
  q.written();
  EXPECT_EQ(take_all(q).size(), 2u);
}

TEST(SendQueue, RefusesPastTheByteLimitCountingFramesInFlight) {
  SendQueue q(10);
  EXPECT_TRUE(q.push(f("1234")));  // 6 bytes with the header
  take_all(q);
  EXPECT_FALSE(q.push(f("12345")));  // 6 + 7 > 10
  q.written();
  EXPECT_TRUE(q.push(f("12345")));
  EXPECT_LE(q.bytes(), 10u);
}

TEST(SendQueue, ConflationFreesRoomUnderTheLimit) {
  SendQueue q(20);
  q.push(f("x"));
  take_all(q);
  EXPECT_TRUE(q.push(f("aaaaaaaa"), 5));  // 3 + 10
  EXPECT_TRUE(q.push(f("bbbbbbbb"), 5));  // replaces it: still 13
  EXPECT_EQ(q.bytes(), 13u);
}

TEST(SendQueue, FinalFrameIgnoresTheLimit) {
  SendQueue q(4);
  EXPECT_FALSE(q.push(f("too long")));
  q.push_final(close_frame(1008, "bye"));
  EXPECT_TRUE(q.has_queued());
}

TEST(SendQueue, SharedFramesLiveUntilTheLastQueueDropsThem) {
  FrameRef shared = f("shared");
  SendQueue a(100), b(100);
  a.push(shared);
  b.push(shared);
  shared.reset();
  auto pa = take_all(a);
  a.written();
  auto pb = take_all(b);  // still valid: b holds a reference
  EXPECT_EQ(pb, (std::vector<std::string>{"shared"}));
  b.written();
}

}  // namespace
}  // namespace oddsrelay::relay

namespace oddsrelay::relay {
namespace {

TEST(SendQueue, ExemptFramesSitOutsideTheLimitUntilWritten) {
  SendQueue q(10);
  q.push_exempt(text_frame(std::string(100, 's')));  // a connect snapshot bigger than the bound
  EXPECT_TRUE(q.push(text_frame("1234")));           // 6 bytes counted
  EXPECT_FALSE(q.push(text_frame("12345")));
  q.take([](std::string_view) {});
  q.written();
  EXPECT_EQ(q.bytes(), 0u);
  EXPECT_TRUE(q.push(text_frame("12345678")));
}

}  // namespace
}  // namespace oddsrelay::relay
