// /pt-ws events= and markets= filters in one loop's fan-out (pt_stream.h,
// stream_filter.h): a filtered stream gets only the admitted events and,
// within their odds, only the admitted markets, live, in its connect
// snapshot and in a resumed catch-up; a cut frame holds exactly what the
// encoder writes for those entries; and streams that share a filter share
// one encoding of each cut frame (one per distinct filter, none per
// stream).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/relay/fanout_fixture.h"

namespace oddsrelay::relay {
namespace {

std::vector<std::string> kinds(StreamConn& c) {
  std::vector<std::string> v;
  for (auto& p : take(c)) v.push_back(kind(p));
  return v;
}

// Events 7 and 8 go live, 7 with markets 1001 and 1002, 8 with 1001.
struct FilterFanout : Fanout {
  LoopBatch two_events() {
    return fan_out({test::event(1000, "7", 1, true), test::event(1000, "8", 1, true), odds(1000, "7", 1001, 150),
                    odds(1000, "7", 1002, 160), odds(1000, "8", 1001, 170)});
  }
};

TEST_F(FilterFanout, AStreamGetsOnlyTheAdmittedEventsAndMarkets) {
  StreamConn* ev7 = stream(kAll, {}, {7});
  StreamConn* m1001 = stream(kAll, {}, {}, {1001});
  StreamConn* both = stream(kAll, {}, {7}, {1002});
  two_events();
  const auto got7 = take(*ev7);
  ASSERT_EQ(got7.size(), 3u);  // evt:1 with event 7 only, odds:1:7 whole, INFO
  EXPECT_NE(got7[0].find("\"7\":"), std::string::npos);
  EXPECT_EQ(got7[0].find("\"8\":"), std::string::npos);
  EXPECT_EQ(got7[1], encoded(*ctx->snap, 7, {1001, 1002}));
  EXPECT_EQ(kind(got7[2]), "INFO");
  const auto gotm = take(*m1001);
  ASSERT_EQ(gotm.size(), 4u);  // both events' lists, each event's odds cut to 1001, INFO
  EXPECT_EQ(gotm[1], encoded(*ctx->snap, 7, {1001}));
  EXPECT_EQ(gotm[2], encoded(*ctx->snap, 8, {1001}));
  const auto gotb = take(*both);
  ASSERT_EQ(gotb.size(), 3u);
  EXPECT_EQ(gotb[1], encoded(*ctx->snap, 7, {1002}));
  // A batch with nothing admitted, kQuietInfoMs after the last INFO at
  // the latest, is its INFO alone; sooner, its INFO waits (next test).
  fan_out({odds(1200, "8", 1001, 172), odds(1200, "7", 1001, 152)});
  EXPECT_EQ(kinds(*both), std::vector<std::string>{});
  EXPECT_EQ(kinds(*ev7), (std::vector<std::string>{"odds:1:7", "INFO"}));
  ctx->now += 100;
  fan_out({odds(1300, "8", 1001, 173)});
  EXPECT_EQ(kinds(*both), std::vector<std::string>{"INFO"});
}

uint64_t info_field(const std::string& p, const char* name) {
  const size_t at = p.find(std::string("\"") + name + "\":");
  return at == std::string::npos ? 0 : std::stoull(p.substr(at + std::strlen(name) + 3));
}

// Quiet groups: a group that brings a stream no frame sends no lone INFO
// within 100 ms of the stream's last INFO; its range goes with the next
// INFO (from = the previous INFO's seq + 1 still), the next group's with
// frames or the timer's at most 100 ms after the last INFO. Frames are
// never held.
TEST_F(FilterFanout, AQuietGroupsInfoWaitsAtMostItsBoundAndChainsOn) {
  StreamConn* c = stream(kAll, {}, {7}, {1002});
  ctx->now = 990;
  two_events();
  const auto first = take(*c);
  ASSERT_EQ(kind(first.back()), "INFO");
  const uint64_t seq0 = info_field(first.back(), "seq");
  ctx->now = 1000;
  const LoopBatch quiet1 = fan_out({odds(1200, "8", 1001, 172)});
  ctx->now = 1010;
  fan_out({odds(1300, "7", 1001, 153)});             // event 7, but not market 1002
  EXPECT_EQ(kinds(*c), std::vector<std::string>{});  // nothing to write: no lone INFO
  // Frames for it: sent at once, their INFO covering the quiet groups.
  ctx->now = 1020;
  const LoopBatch busy = fan_out({odds(1400, "7", 1002, 161)});
  auto got = take(*c);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(kind(got[0]), "odds:1:7");
  EXPECT_EQ(info_field(got[1], "from"), quiet1.from);
  EXPECT_EQ(quiet1.from, seq0 + 1);
  EXPECT_EQ(info_field(got[1], "seq"), busy.seq);
  // Quiet again: the timer sends the INFO kQuietInfoMs after the last one.
  ctx->now = 1030;
  const LoopBatch quiet2 = fan_out({odds(1500, "8", 1001, 174)});
  ctx->now = 1119;  // the last INFO went out at 1020
  pt->on_timer();
  EXPECT_EQ(kinds(*c), std::vector<std::string>{});
  ctx->now = 1120;
  pt->on_timer();
  got = take(*c);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(info_field(got[0], "from"), busy.seq + 1);
  EXPECT_EQ(info_field(got[0], "seq"), quiet2.seq);
  EXPECT_EQ(info_field(got[0], "at"), 1500u);
  // Nothing waits now: the timer sends nothing more.
  ctx->now = 2000;
  pt->on_timer();
  EXPECT_EQ(kinds(*c), std::vector<std::string>{});
}

TEST_F(FilterFanout, AnUnknownEventFlowsOnceItAppears) {
  StreamConn* c = stream(kAll, {}, {9});
  two_events();
  EXPECT_EQ(kinds(*c), std::vector<std::string>{"INFO"});
  fan_out({test::event(1200, "9", 1, true), odds(1200, "9", 1001, 180)});
  EXPECT_EQ(kinds(*c), (std::vector<std::string>{"evt:1", "odds:1:9", "INFO"}));
}

TEST_F(FilterFanout, AnEventLeavingTheStreamsViewGetsItsNull) {
  StreamConn* c = stream(api::kPermPrematch, {}, {10});
  fan_out({test::event(1100, "10", 1, false), test::event(1100, "11", 1, false)});
  auto got = take(*c);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].find("\"11\":"), std::string::npos);
  fan_out({test::event(1200, "10", 1, true), test::event(1200, "11", 1, true)});  // kick-off: not pre-match any more
  got = take(*c);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].substr(got[0].rfind('\x1F') + 1), "{\"10\":null}");
}

TEST_F(FilterFanout, StreamsSharingAFilterShareOneEncodingPerDistinctFilter) {
  std::vector<StreamConn*> a, b, plain;
  for (int i = 0; i < 3; ++i) a.push_back(stream(kAll, {}, {7}, {1001}));
  for (int i = 0; i < 2; ++i) b.push_back(stream(kAll, {}, {}, {1002}));
  for (int i = 0; i < 2; ++i) plain.push_back(stream(kAll));
  const uint64_t before = stats.frames_encoded.load();
  two_events();
  // The hub: evt:1 for the two classes that see live events, 2 odds
  // frames, the INFO (5). Filter a cuts evt:1 (to event 7) and odds:1:7
  // (to 1001); b cuts odds:1:7 (to 1002) and drops odds:1:8: 3 more,
  // whatever the number of streams.
  EXPECT_EQ(stats.frames_encoded.load() - before, 5u + 3u);
  for (auto* streams : {&a, &b, &plain}) {
    std::vector<const char*> first;
    (*streams)[0]->q.take([&](std::string_view s) { first.push_back(s.data()); });
    for (size_t i = 1; i < streams->size(); ++i) {
      std::vector<const char*> other;
      (*streams)[i]->q.take([&](std::string_view s) { other.push_back(s.data()); });
      EXPECT_EQ(other, first);  // the very same bytes
    }
  }
}

TEST_F(FilterFanout, TheConnectSnapshotAndACatchUpFollowTheFilter) {
  two_events();
  StreamConn* c = stream(kAll, {}, {8}, {1001});
  pt->start(c, ResumeWindow::Verdict::Resumed, 0);  // no resume asked: the connect snapshot
  auto got = take(*c);
  ASSERT_EQ(got.size(), 3u);                                             // ready INFO, evt:1 (event 8), odds:1:8 (1001)
  EXPECT_NE(got[0].find("\"frames\":2}"), std::string::npos) << got[0];  // it counts what follows
  EXPECT_EQ(got[1].find("\"7\":"), std::string::npos);
  EXPECT_EQ(got[2], encoded(*ctx->snap, 8, {1001}));
  c->q.written();

  const uint64_t seq = ctx->snap->seq;
  LoopBatch batch = fan_out({odds(1100, "8", 1001, 171), odds(1100, "8", 1002, 181), odds(1100, "7", 1001, 151)});
  ctx->window.add(std::move(batch), 0);
  api::StreamTicket t;
  t.permissions = kAll;
  t.events = {8};
  t.markets = {1001};
  t.resume = api::StreamTicket::Resume::Asked;
  t.resume_seq = seq;
  conns.push_back(std::make_unique<StreamConn>(nullptr, std::move(t), opts));
  StreamConn* r = conns.back().get();
  pt->add(r);
  pt->start(r, ResumeWindow::Verdict::Resumed, 0);
  got = take(*r);
  ASSERT_EQ(got.size(), 3u);  // ready INFO, odds:1:8 cut to 1001, the batch's INFO
  EXPECT_EQ(got[0].find("\"frames\""), std::string::npos) << got[0];  // resumed: no snapshot follows
  EXPECT_EQ(got[1], encoded(*ctx->snap, 8, {1001}));
}

}  // namespace
}  // namespace oddsrelay::relay
