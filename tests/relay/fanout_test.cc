// /pt-ws fan-out of one loop (pt_stream.h) without sockets: each stream
// gets the frames its permissions and sports filter admit, in order, then
// the INFO; every stream is handed the same bytes; a stream whose write is
// in flight conflates odds and INFOs so the INFOs it reads still chain
// (from = previous seq + 1) and say how many frames were replaced; a stream
// past its byte bound is doomed, once, and counted. And the outbox lists a
// stream to write once per loop turn however many frames it got.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/relay/fanout_fixture.h"

namespace oddsrelay::relay {
namespace {

TEST_F(Fanout, EachStreamGetsWhatItsFilterAdmitsThenTheInfo) {
  StreamConn* all = stream(kAll);
  StreamConn* other_sport = stream(kAll, {2});
  StreamConn* no_odds = stream(api::kPermLive);
  LoopBatch batch =
      fan_out({test::event(1000, "7", 1, true), test::market(1100, "7", 1001, {{"s", 0, {{2001, 185, 0}}}})});
  EXPECT_EQ(take(*all),
            (std::vector<std::string>{payload(batch.frames[1].frame->bytes()), payload(batch.frames[2].frame->bytes()),
                                      payload(batch.marker->bytes())}));
  std::vector<std::string> kinds;
  for (auto& p : take(*no_odds)) kinds.push_back(kind(p));
  EXPECT_EQ(kinds, (std::vector<std::string>{"evt:1", "INFO"}));  // its class (live only), no prices
  kinds.clear();
  for (auto& p : take(*other_sport)) kinds.push_back(kind(p));
  EXPECT_EQ(kinds, std::vector<std::string>{"INFO"});
  EXPECT_EQ(stats.deliveries.load(), 3u);  // INFOs are not counted as deliveries
  EXPECT_EQ(ctx->out.dirty.size(), 3u);    // one write each, however many frames
}

TEST_F(Fanout, EveryStreamIsHandedTheSameBytes) {
  StreamConn* a = stream(kAll);
  StreamConn* b = stream(kAll);
  fan_out({test::event(1000, "7", 1, true)});
  std::vector<const char*> pa, pb;
  a->q.take([&](std::string_view s) { pa.push_back(s.data()); });
  b->q.take([&](std::string_view s) { pb.push_back(s.data()); });
  ASSERT_EQ(pa.size(), 3u);  // evt, the new live event's odds, INFO
  EXPECT_EQ(pa, pb);
}

TEST_F(Fanout, AStreamBehindConflatesAndItsInfosStillChain) {
  StreamConn* slow = stream(kAll);
  StreamConn* fast = stream(kAll);
  LoopBatch batch1 =
      fan_out({test::event(1000, "7", 1, true), test::market(1100, "7", 1001, {{"s", 0, {{2001, 185, 0}}}})});
  take(*slow);  // its first write is in flight, never completed
  take(*fast);
  fast->q.written();
  LoopBatch batch2 = fan_out({test::market(1200, "7", 1001, {{"s", 0, {{2001, 190, 0}}}})});
  LoopBatch batch3 = fan_out({test::market(1300, "7", 1001, {{"s", 0, {{2001, 195, 0}}}})});
  slow->q.written();
  const auto got = take(*slow);
  // One odds frame (the newest: markets it names cover the older) and one
  // INFO covering both batches, saying two frames were replaced (an odds
  // frame and an INFO).
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], payload(batch3.frames[0].frame->bytes()));
  EXPECT_EQ(got[1], "INFO\x1FPUB\x1F{\"seq\":" + std::to_string(batch3.seq) +
                        ",\"from\":" + std::to_string(batch2.from) +
                        ",\"at\":1300,\"conflated\":2,\"applied_us\":" + std::to_string(batch3.stamps.applied_us) +
                        ",\"encoded_us\":" + std::to_string(batch3.stamps.encoded_us) + "}");
  EXPECT_EQ(batch2.from, batch1.seq + 1);
  EXPECT_EQ(stats.conflated.load(), 2u);
  // The fast stream got both batches whole, the shared INFOs unchanged.
  const auto fast_got = take(*fast);
  ASSERT_EQ(fast_got.size(), 4u);
  EXPECT_EQ(fast_got[1], payload(batch2.marker->bytes()));
  EXPECT_EQ(fast_got[3], payload(batch3.marker->bytes()));
}

TEST_F(Fanout, AStreamPastItsBoundIsDoomedOnceAndGetsNothingMore) {
  opts.max_queue_bytes = 64;  // less than a batch
  start();
  StreamConn* c = stream(kAll);
  fan_out({test::event(1000, "7", 1, true), test::market(1100, "7", 1001, {{"s", 0, {{2001, 185, 0}}}})});
  EXPECT_EQ(c->state, ConnState::Doomed);
  ASSERT_EQ(ctx->out.doomed.size(), 1u);
  EXPECT_EQ(ctx->out.doomed[0], c);
  EXPECT_EQ(stats.closed_slow.load(), 1u);
  EXPECT_FALSE(c->q.has_queued());
  fan_out({test::market(1200, "7", 1001, {{"s", 0, {{2001, 190, 0}}}})});
  EXPECT_EQ(ctx->out.doomed.size(), 1u);
  EXPECT_EQ(stats.closed_slow.load(), 1u);
  EXPECT_FALSE(c->q.has_queued());
}

TEST_F(Fanout, BatchesTakenTogetherGoOutAsOneWithOneInfo) {
  std::vector<SharedBatchPtr> shared;
  for (int i = 0; i < 3; ++i) {
    engine.apply(test::event(1000 + i, std::to_string(7 + i), 1, true));
    shared.push_back(hub->encode(engine.commit()));
    ASSERT_TRUE(shared.back());
  }
  LoopBatch batch = local_batch(shared);
  EXPECT_EQ(batch.from, shared[0]->from);
  EXPECT_EQ(batch.seq, shared[2]->seq);
  EXPECT_EQ(batch.at, 1002);
  ASSERT_EQ(batch.frames.size(), shared[0]->frames.size() + shared[1]->frames.size() + shared[2]->frames.size());
  EXPECT_EQ(batch.frames.back().frame->bytes().data(),
            shared[2]->frames.back().frame->bytes().data());  // shared, not copied
  EXPECT_EQ(payload(batch.marker->bytes()),
            "INFO\x1FPUB\x1F{\"seq\":" + std::to_string(batch.seq) + ",\"from\":" + std::to_string(batch.from) +
                ",\"at\":1002,\"applied_us\":" + std::to_string(shared[2]->stamps.applied_us) +
                ",\"encoded_us\":" + std::to_string(shared[2]->stamps.encoded_us) + "}");
  ASSERT_EQ(batch.live.size(), 3u);
  EXPECT_EQ(batch.live[2].number, 9u);
}

TEST_F(Fanout, RemovedStreamsGetNothing) {
  StreamConn* a = stream(kAll);
  StreamConn* b = stream(kAll);
  pt->remove(a);
  EXPECT_EQ(stats.pt_connections.load(), 1u);
  fan_out({test::event(1000, "7", 1, true)});
  EXPECT_FALSE(a->q.has_queued());
  EXPECT_EQ(take(*b).size(), 3u);
}

}  // namespace
}  // namespace oddsrelay::relay
