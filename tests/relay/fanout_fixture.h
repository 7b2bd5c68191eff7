// A /pt-ws loop without sockets for the fan-out tests (fanout_test.cc,
// filter_fanout_test.cc): an engine, the hub, one loop's PtStreams, and
// streams whose queues the tests read as a socket would.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/core/engine.h"
#include "protocol/api/api_keys.h"
#include "relay/frame_encoder.h"
#include "relay/hub.h"
#include "relay/pt_stream.h"
#include "tests/test_util.h"

namespace oddsrelay::relay {

inline std::string payload(std::string_view b) {
  const unsigned len7 = static_cast<unsigned char>(b[1]) & 0x7f;
  return std::string(b.substr(len7 == 127 ? 10 : len7 == 126 ? 4 : 2));
}

// What a stream's queue would write now: each frame's payload, in order.
inline std::vector<std::string> take(StreamConn& c) {
  std::vector<std::string> v;
  c.q.take([&](std::string_view b) { v.push_back(payload(b)); });
  return v;
}

inline std::string kind(const std::string& p) {  // "evt:1", "odds:1:7", "INFO"
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
  StreamConn* stream(uint32_t perms, std::vector<int32_t> sports = {}, std::vector<uint64_t> events = {},
                     std::vector<uint32_t> markets = {}, bool verify = false, uint32_t conflate_ms = 0) {
    api::StreamTicket t;
    t.verify = verify;
    t.conflate_ms = conflate_ms;
    t.kind = api::StreamTicket::Kind::PtWs;
    t.permissions = perms;
    t.sports = std::move(sports);
    t.events = std::move(events);
    t.markets = std::move(markets);
    conns.push_back(std::make_unique<StreamConn>(nullptr, std::move(t), opts));
    pt->add(conns.back().get());
    return conns.back().get();
  }
  // One batch through the hub and this loop's fan-out, as RelayLoop::take_batches does.
  LoopBatch fan_out(std::vector<feed::Record> recs) {
    for (auto& r : recs) engine.apply(std::move(r));
    SharedBatchPtr shared = hub->encode(engine.commit());
    EXPECT_TRUE(shared);
    LoopBatch batch = local_batch(*shared);
    ctx->snap = shared->batch->snapshot;
    pt->fan_out(batch);
    return batch;
  }
};

// One market of an event with one outcome at `price`.
inline feed::Record odds(int64_t at, const std::string& id, uint32_t market, int price) {
  return test::market(at, id, market, {{"s", 0, {{2001, price, 0}}}});
}

// The payload the encoder writes for those markets of the event now.
inline std::string encoded(const Snapshot& s, uint64_t event, std::vector<uint32_t> markets) {
  const EventEntry* e = s.events.find(event);
  EXPECT_TRUE(e);
  return payload(pt_odds(*e, e->sport(), markets)->bytes());
}

inline constexpr uint32_t kAll = api::kPermLive | api::kPermPrematch | api::kPermOdds;

}  // namespace oddsrelay::relay
