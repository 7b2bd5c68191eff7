// The hub: one engine batch becomes one SharedBatch whose frames are encoded once
// (event lists per class of events first, then odds), stamped with the
// server's clocks, and shared by every loop with one reference per loop per
// frame however many subscribers send it; batches the loops already start
// from are skipped.
#include "relay/hub.h"

#include <gtest/gtest.h>

#include <string>

#include "engine/core/engine.h"
#include "protocol/clock.h"
#include "relay/relay_server.h"
#include "relay/stream_conn.h"
#include "tests/test_util.h"

namespace oddsrelay::relay {
namespace {

using test::L;

// A frame's payload (server frames are unmasked).
std::string text(const SharedFrame& f) {
  std::string_view b = f->bytes();
  const unsigned len7 = static_cast<unsigned char>(b[1]) & 0x7f;
  return std::string(b.substr(len7 == 127 ? 10 : len7 == 126 ? 4 : 2));
}

struct HubFixture : ::testing::Test {
  Engine engine;
  RelayStats stats;
  BatchPtr apply(std::vector<feed::Record> recs) {
    for (auto& r : recs) engine.apply(std::move(r));
    return engine.commit();
  }
};

TEST_F(HubFixture, OneBatchOneTurnEventListsBeforeOdds) {
  Hub hub(engine.current(), stats);
  BatchPtr b = apply({test::event(1000, "7", 1, /*live=*/true),
                      test::market(1500, "7", 1001, {{"s", 0, {{2001, 185, 0}, {2002, 340, 0}}}})});
  ASSERT_TRUE(b);
  SharedBatchPtr sb = hub.encode(b);
  ASSERT_TRUE(sb);
  EXPECT_EQ(sb->from, b->first_seq);
  EXPECT_EQ(sb->seq, b->snapshot->seq);
  EXPECT_EQ(sb->at, 1500);
  // A live event: one evt frame per class of events that sees it (live
  // only, live and pre-match), then its odds.
  ASSERT_EQ(sb->frames.size(), 3u);
  EXPECT_FALSE(sb->frames[0].odds);
  EXPECT_EQ(sb->frames[0].events, kLiveEvents);
  EXPECT_FALSE(sb->frames[1].odds);
  EXPECT_EQ(sb->frames[1].events, kLiveEvents | kPrematchEvents);
  EXPECT_TRUE(sb->frames[2].odds);
  EXPECT_EQ(sb->frames[2].channel, 7u);
  EXPECT_EQ(sb->frames[2].markets, std::vector<uint32_t>{1001});
  EXPECT_NE(text(sb->frames[0].frame).find("evt:1"), std::string::npos);
  EXPECT_NE(text(sb->frames[2].frame).find("odds:1:7"), std::string::npos);
  ASSERT_EQ(sb->live.size(), 1u);
  EXPECT_EQ(sb->live[0].number, 7u);
  EXPECT_EQ(stats.batches.load(), 1u);
  EXPECT_EQ(stats.frames_encoded.load(), 4u);  // three frames and the INFO
}

TEST_F(HubFixture, InfoCarriesRecordsAndMicrosecondStamps) {
  Hub hub(engine.current(), stats);
  BatchPtr b = apply({test::event(1000, "7", 1, true), test::event(1200, "8", 1, true)});
  SharedBatchPtr sb = hub.encode(b);
  ASSERT_TRUE(sb);
  EXPECT_EQ(sb->stamps.applied_us, b->sealed_us);
  EXPECT_GT(sb->stamps.applied_us, 1'600'000'000'000'000);  // microseconds since the epoch, not ms
  EXPECT_GE(sb->stamps.encoded_us, sb->stamps.applied_us);
  const std::string info = text(sb->marker);
  EXPECT_EQ(info, "INFO\x1FPUB\x1F{\"seq\":" + std::to_string(sb->seq) + ",\"from\":" + std::to_string(sb->from) +
                      ",\"at\":1200,\"applied_us\":" + std::to_string(sb->stamps.applied_us) +
                      ",\"encoded_us\":" + std::to_string(sb->stamps.encoded_us) + "}");
}

// A batch whose records were stamped on arrival carries the oldest stamp
// into the INFO, first of the three.
TEST_F(HubFixture, InfoCarriesTheArrivalOfTheGroupsFirstRecord) {
  Hub hub(engine.current(), stats);
  feed::Record first = test::event(1000, "7", 1, true), second = test::event(1200, "8", 1, true);
  first.arrived_ns = mono_ns() - 2'000'000;
  second.arrived_ns = mono_ns();
  BatchPtr b = apply({std::move(first), std::move(second)});
  SharedBatchPtr sb = hub.encode(b);
  ASSERT_TRUE(sb);
  EXPECT_EQ(sb->stamps.arrived_us, b->arrived_us);
  EXPECT_GE(sb->stamps.applied_us - sb->stamps.arrived_us, 2'000);
  EXPECT_EQ(text(sb->marker), "INFO\x1FPUB\x1F{\"seq\":" + std::to_string(sb->seq) +
                                  ",\"from\":" + std::to_string(sb->from) +
                                  ",\"at\":1200,\"arrived_us\":" + std::to_string(sb->stamps.arrived_us) +
                                  ",\"applied_us\":" + std::to_string(sb->stamps.applied_us) +
                                  ",\"encoded_us\":" + std::to_string(sb->stamps.encoded_us) + "}");
}

TEST_F(HubFixture, PrematchEventOnlyForKeysThatSeePrematchAndNoOdds) {
  Hub hub(engine.current(), stats);
  SharedBatchPtr sb = hub.encode(
      apply({test::event(1000, "9", 2, /*live=*/false), test::market(1100, "9", 1001, {{"s", 0, {{2001, 185, 0}}}})}));
  ASSERT_TRUE(sb);
  ASSERT_EQ(sb->frames.size(), 2u);
  EXPECT_EQ(sb->frames[0].events, kPrematchEvents);
  EXPECT_EQ(sb->frames[1].events, kLiveEvents | kPrematchEvents);
  EXPECT_FALSE(sb->frames[0].odds || sb->frames[1].odds);
  EXPECT_TRUE(sb->live.empty());
}

TEST_F(HubFixture, SkipsBatchesTheLoopsStartFrom) {
  BatchPtr old = apply({test::event(1000, "7", 1, true)});
  Hub hub(engine.current(), stats);  // started after `old`
  EXPECT_FALSE(hub.encode(old));
  EXPECT_EQ(stats.batches.load(), 0u);
  SharedBatchPtr sb = hub.encode(apply({test::event(2000, "8", 1, true)}));
  ASSERT_TRUE(sb);
  EXPECT_EQ(sb->prev, old->snapshot);
}

TEST_F(HubFixture, OneReferencePerLoopPerFrameNotPerSubscriber) {
  Hub hub(engine.current(), stats);
  SharedBatchPtr sb = hub.encode(apply({test::event(1000, "7", 1, true)}));
  ASSERT_TRUE(sb);
  const SharedFrame& shared = sb->frames[0].frame;
  ASSERT_EQ(shared.use_count(), 1);
  {
    LoopBatch loop_a = local_batch(*sb), loop_b = local_batch(*sb);
    EXPECT_EQ(shared.use_count(), 3);                                 // the hub's and one per loop
    std::vector<FrameRef> subscribers(1000, loop_a.frames[0].frame);  // a loop's subscribers take local references
    EXPECT_EQ(shared.use_count(), 3);
    // The very same bytes, not copies.
    EXPECT_EQ(loop_a.frames[0].frame->bytes().data(), shared->bytes().data());
    EXPECT_EQ(loop_b.frames[0].frame->bytes().data(), shared->bytes().data());
    EXPECT_EQ(loop_a.marker->bytes().data(), sb->marker->bytes().data());
  }
  EXPECT_EQ(shared.use_count(), 1);  // every loop let go
}

}  // namespace
}  // namespace oddsrelay::relay
