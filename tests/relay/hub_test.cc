// The hub: one engine batch becomes one Turn whose frames are encoded once
// (event lists per class of events first, then odds), stamped with the
// server's clocks, and shared by every loop with one reference per loop per
// frame however many subscribers send it; batches the loops already start
// from are skipped.
#include "relay/hub.h"

#include <gtest/gtest.h>

#include <string>

#include "engine/core/engine.h"
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
  TurnPtr t = hub.encode(b);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->from, b->first_seq);
  EXPECT_EQ(t->seq, b->snapshot->seq);
  EXPECT_EQ(t->at, 1500);
  // A live event: one evt frame per class of events that sees it (live
  // only, live and pre-match), then its odds.
  ASSERT_EQ(t->frames.size(), 3u);
  EXPECT_FALSE(t->frames[0].odds);
  EXPECT_EQ(t->frames[0].events, kLiveEvents);
  EXPECT_FALSE(t->frames[1].odds);
  EXPECT_EQ(t->frames[1].events, kLiveEvents | kPrematchEvents);
  EXPECT_TRUE(t->frames[2].odds);
  EXPECT_EQ(t->frames[2].channel, 7u);
  EXPECT_EQ(t->frames[2].markets, std::vector<uint32_t>{1001});
  EXPECT_NE(text(t->frames[0].frame).find("evt:1"), std::string::npos);
  EXPECT_NE(text(t->frames[2].frame).find("odds:1:7"), std::string::npos);
  ASSERT_EQ(t->live.size(), 1u);
  EXPECT_EQ(t->live[0].number, 7u);
  EXPECT_EQ(stats.batches.load(), 1u);
  EXPECT_EQ(stats.frames_encoded.load(), 4u);  // three frames and the INFO
}

TEST_F(HubFixture, InfoCarriesRecordsAndMicrosecondStamps) {
  Hub hub(engine.current(), stats);
  BatchPtr b = apply({test::event(1000, "7", 1, true), test::event(1200, "8", 1, true)});
  TurnPtr t = hub.encode(b);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->stamps.applied_us, b->sealed_us);
  EXPECT_GT(t->stamps.applied_us, 1'600'000'000'000'000);  // microseconds since the epoch, not ms
  EXPECT_GE(t->stamps.encoded_us, t->stamps.applied_us);
  const std::string info = text(t->marker);
  EXPECT_EQ(info, "INFO\x1FPUB\x1F{\"seq\":" + std::to_string(t->seq) + ",\"from\":" + std::to_string(t->from) +
                      ",\"at\":1200,\"applied_us\":" + std::to_string(t->stamps.applied_us) +
                      ",\"encoded_us\":" + std::to_string(t->stamps.encoded_us) + "}");
}

TEST_F(HubFixture, PrematchEventOnlyForKeysThatSeePrematchAndNoOdds) {
  Hub hub(engine.current(), stats);
  TurnPtr t = hub.encode(
      apply({test::event(1000, "9", 2, /*live=*/false), test::market(1100, "9", 1001, {{"s", 0, {{2001, 185, 0}}}})}));
  ASSERT_TRUE(t);
  ASSERT_EQ(t->frames.size(), 2u);
  EXPECT_EQ(t->frames[0].events, kPrematchEvents);
  EXPECT_EQ(t->frames[1].events, kLiveEvents | kPrematchEvents);
  EXPECT_FALSE(t->frames[0].odds || t->frames[1].odds);
  EXPECT_TRUE(t->live.empty());
}

TEST_F(HubFixture, SkipsBatchesTheLoopsStartFrom) {
  BatchPtr old = apply({test::event(1000, "7", 1, true)});
  Hub hub(engine.current(), stats);  // started after `old`
  EXPECT_FALSE(hub.encode(old));
  EXPECT_EQ(stats.batches.load(), 0u);
  TurnPtr t = hub.encode(apply({test::event(2000, "8", 1, true)}));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->prev, old->snapshot);
}

TEST_F(HubFixture, OneReferencePerLoopPerFrameNotPerSubscriber) {
  Hub hub(engine.current(), stats);
  TurnPtr t = hub.encode(apply({test::event(1000, "7", 1, true)}));
  ASSERT_TRUE(t);
  const SharedFrame& shared = t->frames[0].frame;
  ASSERT_EQ(shared.use_count(), 1);
  {
    Group loop_a = local_group(*t), loop_b = local_group(*t);
    EXPECT_EQ(shared.use_count(), 3);                                 // the turn's and one per loop
    std::vector<FrameRef> subscribers(1000, loop_a.frames[0].frame);  // a loop's subscribers take local references
    EXPECT_EQ(shared.use_count(), 3);
    // The very same bytes, not copies.
    EXPECT_EQ(loop_a.frames[0].frame->bytes().data(), shared->bytes().data());
    EXPECT_EQ(loop_b.frames[0].frame->bytes().data(), shared->bytes().data());
    EXPECT_EQ(loop_a.marker->bytes().data(), t->marker->bytes().data());
  }
  EXPECT_EQ(shared.use_count(), 1);  // every loop let go
}

}  // namespace
}  // namespace oddsrelay::relay
