// /pt-ws conflate_ms (conflation.h, pt_stream.h): a conflating stream gets
// the first change after a quiet interval at once, then nothing until the
// interval is up, then one frame per channel with the latest state of every
// entry the held batches changed (markets merged) and one INFO covering all
// their records; the merged frames are encoded once for the bucket.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/relay/fanout_fixture.h"

namespace oddsrelay::relay {
namespace {

std::string body(const std::string& p) { return p.substr(p.rfind('\x1F') + 1); }

struct Conflating : Fanout {
  std::vector<uint64_t> armed;  // delays the timer was armed with
  StreamConn* conflating(uint32_t ms) {
    StreamConn* c = stream(kAll);
    pt->remove(c);  // into the bucket of its interval instead
    c->ticket.conflate_ms = ms;
    pt->add(c);
    return c;
  }
  void SetUp() override {
    Fanout::SetUp();
    pt->arm_timer = [this](uint64_t d) { armed.push_back(d); };
  }
};

TEST_F(Conflating, HeldGroupsLeaveAsOneFramePerChannelAndOneInfo) {
  StreamConn* c = conflating(250);
  StreamConn* a = conflating(250);
  StreamConn* plain = stream(kAll);
  ctx->now = 1000;
  LoopBatch batch1 = fan_out({test::event(1000, "7", 1, true), test::event(1000, "8", 1, true),
                              odds(1000, "7", 1001, 150), odds(1000, "7", 1002, 160), odds(1000, "8", 1001, 170)});
  // Quiet before: at once, as an unconflated stream gets it.
  EXPECT_EQ(take(*c), take(*plain));
  take(*a);
  a->q.written();
  ctx->now = 1100;
  LoopBatch batch2 = fan_out({odds(1100, "7", 1001, 151)});
  ctx->now = 1150;
  fan_out({odds(1150, "7", 1002, 161), odds(1150, "8", 1001, 171)});
  LoopBatch batch4 = fan_out({odds(1160, "7", 1001, 152)});
  EXPECT_TRUE(take(*c).empty());  // held
  ASSERT_FALSE(armed.empty());
  EXPECT_EQ(armed.back(), 100u);  // 1250 - 1150
  const uint64_t before = stats.frames_encoded.load();
  ctx->now = 1250;
  pt->on_timer();
  const auto got = take(*c);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], encoded(*ctx->snap, 7, {1001, 1002}));
  EXPECT_EQ(got[1], encoded(*ctx->snap, 8, {1001}));
  EXPECT_EQ(body(got[2]).substr(0, body(got[2]).find(",\"at\"")),
            "{\"seq\":" + std::to_string(batch4.seq) + ",\"from\":" + std::to_string(batch2.from));
  EXPECT_EQ(batch2.from, batch1.seq + 1);
  EXPECT_EQ(stats.frames_encoded.load() - before, 3u);  // two odds frames and the INFO, for both streams
  c->q.written();
  // The same bytes for the other stream of the bucket.
  EXPECT_EQ(take(*a), got);
  // Nothing held: the next change waits for nothing but the interval.
  EXPECT_TRUE((pt->on_timer(), take(*c).empty()));
}

TEST_F(Conflating, AStreamThatConnectedMidIntervalGetsAnInfoFromItsSnapshot) {
  StreamConn* first = conflating(250);
  ctx->now = 1000;
  fan_out({test::event(1000, "7", 1, true), odds(1000, "7", 1001, 150)});
  take(*first);
  ctx->now = 1100;
  fan_out({odds(1100, "7", 1001, 151)});
  StreamConn* late = conflating(250);
  pt->start(late, ResumeWindow::Verdict::Resumed, 0);  // its snapshot: as of now
  const uint64_t snap = ctx->snap->seq;
  take(*late);
  ctx->now = 1150;
  LoopBatch batch = fan_out({odds(1150, "7", 1001, 152)});
  ctx->now = 1250;
  pt->on_timer();
  const auto got = take(*late);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_NE(body(got[1]).find("\"from\":" + std::to_string(snap + 1)), std::string::npos) << got[1];
  EXPECT_NE(body(got[1]).find("\"seq\":" + std::to_string(batch.seq)), std::string::npos);
}

// The bucket's last stream left with changes held; more changed while the
// bucket was empty (fan-out skips it); a stream that joins the bucket again
// must not get the held values after its snapshot (CI's e2e_cpp_client,
// conflated and cut, saw a digest_mismatch from exactly this).
TEST_F(Conflating, ABucketLeftEmptyForgetsWhatItHeld) {
  StreamConn* first = conflating(250);
  ctx->now = 1000;
  fan_out({test::event(1000, "7", 1, true), odds(1000, "7", 1001, 150)});
  take(*first);
  first->q.written();
  ctx->now = 1100;
  fan_out({odds(1100, "7", 1001, 151)});  // held for 1250
  EXPECT_TRUE(take(*first).empty());
  pt->remove(first);
  ctx->now = 1150;
  fan_out({odds(1150, "7", 1001, 152)});                     // nobody in the bucket
  StreamConn* again = stream(kAll, {}, {}, {}, false, 250);  // straight into the bucket, as a reconnect
  pt->start(again, ResumeWindow::Verdict::Resumed, 0);       // its snapshot: 152
  take(*again);
  again->q.written();
  ctx->now = 1200;
  fan_out({test::event(1200, "8", 1, true)});
  ctx->now = 1400;
  pt->on_timer();
  const auto got = take(*again);
  ASSERT_EQ(got.size(), 3u);  // event 8's list entry, its (empty) odds, the INFO: nothing of event 7
  for (const std::string& f : got)
    EXPECT_EQ(f.find("odds:1:7"), std::string::npos) << "a held value from before the bucket emptied: " << f;
}

}  // namespace
}  // namespace oddsrelay::relay
