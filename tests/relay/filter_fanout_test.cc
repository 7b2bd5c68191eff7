// /pt-ws events= and markets= filters in one loop's fan-out (pt_stream.h,
// stream_filter.h): a filtered stream gets only the admitted events and,
// within their odds, only the admitted markets, live, in its connect
// snapshot and in a resumed catch-up; a cut frame holds exactly what the
// encoder writes for those entries; and streams that share a filter share
// one encoding of each cut frame (one per distinct filter, none per
// stream).
#include <gtest/gtest.h>

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
  // A batch with nothing admitted is its INFO alone.
  fan_out({odds(1200, "8", 1001, 172), odds(1200, "7", 1001, 152)});
  EXPECT_EQ(kinds(*both), std::vector<std::string>{"INFO"});
  EXPECT_EQ(kinds(*ev7), (std::vector<std::string>{"odds:1:7", "INFO"}));
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
  ASSERT_EQ(got.size(), 3u);  // ready INFO, evt:1 (event 8), odds:1:8 (1001)
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
  EXPECT_EQ(got[1], encoded(*ctx->snap, 8, {1001}));
}

}  // namespace
}  // namespace oddsrelay::relay
