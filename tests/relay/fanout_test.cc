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

#include "engine/core/engine.h"
#include "protocol/api/api_keys.h"
#include "relay/hub.h"
#include "relay/pt_stream.h"
#include "tests/test_util.h"

namespace oddsrelay::relay {
namespace {

std::string payload(std::string_view b) {
  const unsigned len7 = static_cast<unsigned char>(b[1]) & 0x7f;
  return std::string(b.substr(len7 == 127 ? 10 : len7 == 126 ? 4 : 2));
}

// What a stream's queue would write now: each frame's payload, in order.
std::vector<std::string> take(StreamConn& c) {
  std::vector<std::string> v;
  c.q.take([&](std::string_view b) { v.push_back(payload(b)); });
  return v;
}

std::string kind(const std::string& p) {  // "evt:1", "odds:1:7", "INFO"
  if (p.starts_with("INFO")) return "INFO";
  size_t a = p.find('\x1F'), b = p.find('\x1F', a + 1);
  return p.substr(a + 1, b - a - 1);
}

struct Fanout : ::testing::Test {
  RelayOptions opts;
  RelayStats stats;
  Engine engine;
  std::unique_ptr<Hub> hub;
  std::unique_ptr<StreamContext> ctx;
  std::unique_ptr<PtStreams> pt;
  std::vector<std::unique_ptr<StreamConn>> conns;

  void SetUp() override { start(); }
  void start() {
    hub = std::make_unique<Hub>(engine.current(), stats);
    ctx = std::make_unique<StreamContext>(opts, stats, engine.current());
    pt = std::make_unique<PtStreams>(*ctx);
  }
  StreamConn* stream(uint32_t perms, std::vector<int32_t> sports = {}) {
    rest::StreamTicket t;
    t.kind = rest::StreamTicket::Kind::PtWs;
    t.permissions = perms;
    t.sports = std::move(sports);
    conns.push_back(std::make_unique<StreamConn>(nullptr, std::move(t), opts));
    pt->add(conns.back().get());
    return conns.back().get();
  }
  // One batch through the hub and this loop's fan-out, as RelayLoop::take_turn does.
  Group turn(std::vector<feed::Record> recs) {
    for (auto& r : recs) engine.apply(std::move(r));
    TurnPtr t = hub->encode(engine.commit());
    EXPECT_TRUE(t);
    Group g = local_group(*t);
    ctx->snap = t->batch->snapshot;
    pt->fan_out(g);
    return g;
  }
};

constexpr uint32_t kAll = rest::kPermLive | rest::kPermPrematch | rest::kPermOdds;

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
