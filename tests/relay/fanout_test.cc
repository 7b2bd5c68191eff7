// /pt-ws fan-out of one loop (pt_stream.h) without sockets: each stream
// gets the frames its permissions and sports filter admit, in order, then
// the INFO; every stream is handed the same bytes; a stream whose write is
// in flight conflates odds and INFOs so the INFOs it reads still chain
// (from = previous seq + 1) and say how many frames were replaced; a stream
// past its byte bound is doomed, once, and counted. And the outbox lists a
// stream to write once per turn however many frames it got.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/relay/fanout_fixture.h"

namespace oddsrelay::relay {
namespace {

TEST_F(Fanout, EachStreamGetsWhatItsFilterAdmitsThenTheInfo) {
  StreamConn* all = stream(kAll);
  StreamConn* other_sport = stream(kAll, {2});
  StreamConn* no_odds = stream(rest::kPermLive);
  Group g = turn({test::event(1000, "7", 1, true), test::market(1100, "7", 1001, {{"s", 0, {{2001, 185, 0}}}})});
  EXPECT_EQ(take(*all), (std::vector<std::string>{payload(g.frames[1].frame->bytes()),
                                                  payload(g.frames[2].frame->bytes()), payload(g.marker->bytes())}));
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
  turn({test::event(1000, "7", 1, true)});
  std::vector<const char*> pa, pb;
  a->q.take([&](std::string_view s) { pa.push_back(s.data()); });
  b->q.take([&](std::string_view s) { pb.push_back(s.data()); });
  ASSERT_EQ(pa.size(), 3u);  // evt, the new live event's odds, INFO
  EXPECT_EQ(pa, pb);
}

TEST_F(Fanout, AStreamBehindConflatesAndItsInfosStillChain) {
  StreamConn* slow = stream(kAll);
  StreamConn* fast = stream(kAll);
  Group g1 = turn({test::event(1000, "7", 1, true), test::market(1100, "7", 1001, {{"s", 0, {{2001, 185, 0}}}})});
  take(*slow);  // its first write is in flight, never completed
  take(*fast);
  fast->q.written();
  Group g2 = turn({test::market(1200, "7", 1001, {{"s", 0, {{2001, 190, 0}}}})});
  Group g3 = turn({test::market(1300, "7", 1001, {{"s", 0, {{2001, 195, 0}}}})});
  slow->q.written();
  const auto got = take(*slow);
  // One odds frame (the newest: markets it names cover the older) and one
  // INFO covering both groups, saying two frames were replaced (an odds
  // frame and an INFO).
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], payload(g3.frames[0].frame->bytes()));
  EXPECT_EQ(got[1], "INFO\x1FPUB\x1F{\"seq\":" + std::to_string(g3.seq) + ",\"from\":" + std::to_string(g2.from) +
                        ",\"at\":1300,\"conflated\":2,\"applied_us\":" + std::to_string(g3.applied_us) +
                        ",\"encoded_us\":" + std::to_string(g3.encoded_us) + "}");
  EXPECT_EQ(g2.from, g1.seq + 1);
  EXPECT_EQ(stats.conflated.load(), 2u);
  // The fast stream got both groups whole, the shared INFOs unchanged.
  const auto fast_got = take(*fast);
  ASSERT_EQ(fast_got.size(), 4u);
  EXPECT_EQ(fast_got[1], payload(g2.marker->bytes()));
  EXPECT_EQ(fast_got[3], payload(g3.marker->bytes()));
}

TEST_F(Fanout, AStreamPastItsBoundIsDoomedOnceAndGetsNothingMore) {
  opts.max_queue_bytes = 64;  // less than a group
  start();
  StreamConn* c = stream(kAll);
  turn({test::event(1000, "7", 1, true), test::market(1100, "7", 1001, {{"s", 0, {{2001, 185, 0}}}})});
  EXPECT_EQ(c->state, ConnState::Doomed);
  ASSERT_EQ(ctx->out.doomed.size(), 1u);
  EXPECT_EQ(ctx->out.doomed[0], c);
  EXPECT_EQ(stats.closed_slow.load(), 1u);
  EXPECT_FALSE(c->q.has_queued());
  turn({test::market(1200, "7", 1001, {{"s", 0, {{2001, 190, 0}}}})});
  EXPECT_EQ(ctx->out.doomed.size(), 1u);
  EXPECT_EQ(stats.closed_slow.load(), 1u);
  EXPECT_FALSE(c->q.has_queued());
}

TEST_F(Fanout, TurnsTakenTogetherGoOutAsOneGroupWithOneInfo) {
  std::vector<TurnPtr> turns;
  for (int i = 0; i < 3; ++i) {
    engine.apply(test::event(1000 + i, std::to_string(7 + i), 1, true));
    turns.push_back(hub->encode(engine.commit()));
    ASSERT_TRUE(turns.back());
  }
  Group g = local_group(turns);
  EXPECT_EQ(g.from, turns[0]->from);
  EXPECT_EQ(g.seq, turns[2]->seq);
  EXPECT_EQ(g.at, 1002);
  ASSERT_EQ(g.frames.size(), turns[0]->frames.size() + turns[1]->frames.size() + turns[2]->frames.size());
  EXPECT_EQ(g.frames.back().frame->bytes().data(),
            turns[2]->frames.back().frame->bytes().data());  // shared, not copied
  EXPECT_EQ(payload(g.marker->bytes()),
            "INFO\x1FPUB\x1F{\"seq\":" + std::to_string(g.seq) + ",\"from\":" + std::to_string(g.from) +
                ",\"at\":1002,\"applied_us\":" + std::to_string(turns[2]->stamps.applied_us) +
                ",\"encoded_us\":" + std::to_string(turns[2]->stamps.encoded_us) + "}");
  ASSERT_EQ(g.live.size(), 3u);
  EXPECT_EQ(g.live[2].number, 9u);
}

TEST_F(Fanout, RemovedStreamsGetNothing) {
  StreamConn* a = stream(kAll);
  StreamConn* b = stream(kAll);
  pt->remove(a);
  EXPECT_EQ(stats.pt_connections.load(), 1u);
  turn({test::event(1000, "7", 1, true)});
  EXPECT_FALSE(a->q.has_queued());
  EXPECT_EQ(take(*b).size(), 3u);
}

}  // namespace
}  // namespace oddsrelay::relay
