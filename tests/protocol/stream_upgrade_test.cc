// The /pt-ws handshake's filters (stream_upgrade.h): events= takes any
// event-id form (unknown events allowed) and markets= market ids, each a
// sorted, unique list under its bound; anything else is a 400 naming the
// parameter, as sports= is.
#include "protocol/api/stream_upgrade.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "protocol/api/errors.h"

namespace oddsrelay::api {
namespace {

struct Handshake {
  std::string query;
  http::Request req{};
  StreamTicket ticket{};
  HandshakeError check() {
    req.method = "GET";
    req.path = "/pt-ws";
    req.query = query;
    req.headers = {{"Upgrade", "websocket"},
                   {"Connection", "Upgrade"},
                   {"Sec-WebSocket-Version", "13"},
                   {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}};
    return check_stream_handshake(req, ticket);
  }
};

std::string ids(size_t n, const char* prefix) {
  std::string s;
  for (size_t i = 1; i <= n; ++i) s += (i > 1 ? "," : "") + std::string(prefix) + std::to_string(i);
  return s;
}

TEST(StreamFilters, EventsTakeEveryIdFormAndMarketsTheirIds) {
  Handshake h{"events=s7-101.900,s7_l3.12,7,s7-12&markets=1007,1001,1007"};
  ASSERT_EQ(h.check().status, 0);
  EXPECT_EQ(h.ticket.events, (std::vector<uint64_t>{7, 12, 900}));
  EXPECT_EQ(h.ticket.markets, (std::vector<uint32_t>{1001, 1007}));
}

TEST(StreamFilters, NoParameterOrAnEmptyOneIsNoFilter) {
  Handshake h{"sports=1&events=&markets="};
  ASSERT_EQ(h.check().status, 0);
  EXPECT_TRUE(h.ticket.events.empty());
  EXPECT_TRUE(h.ticket.markets.empty());
}

TEST(StreamFilters, BadListsAre400sNamingTheParameter) {
  for (const char* q : {"events=abc", "events=7,", "events=7,,8", "events=-7", "events=s7-0"}) {
    Handshake h{q};
    HandshakeError e = h.check();
    EXPECT_EQ(e.status, 400) << q;
    EXPECT_STREQ(e.error, err::kBadEvents) << q;
  }
  for (const char* q : {"markets=0", "markets=x", "markets=1001,", "markets=4294967296"}) {
    Handshake h{q};
    HandshakeError e = h.check();
    EXPECT_EQ(e.status, 400) << q;
    EXPECT_STREQ(e.error, err::kBadMarkets) << q;
  }
}

TEST(StreamFilters, BoundsAre100EventsAnd64Markets) {
  Handshake ok{"events=" + ids(100, "") + "&markets=" + ids(64, "")};
  EXPECT_EQ(ok.check().status, 0);
  EXPECT_EQ(ok.ticket.events.size(), 100u);
  Handshake events{"events=" + ids(101, "")};
  EXPECT_EQ(events.check().status, 400);
  Handshake markets{"markets=" + ids(65, "")};
  EXPECT_EQ(markets.check().status, 400);
}

TEST(StreamFilters, ConflateMsIsMillisecondsUpToAMinute) {
  Handshake none{""};
  ASSERT_EQ(none.check().status, 0);
  EXPECT_EQ(none.ticket.conflate_ms, 0u);
  Handshake ok{"conflate_ms=60000"};
  ASSERT_EQ(ok.check().status, 0);
  EXPECT_EQ(ok.ticket.conflate_ms, 60000u);
  for (const char* q : {"conflate_ms=60001", "conflate_ms=-1", "conflate_ms=", "conflate_ms=250ms"}) {
    Handshake h{q};
    HandshakeError e = h.check();
    EXPECT_EQ(e.status, 400) << q;
    EXPECT_STREQ(e.error, err::kBadConflate) << q;
  }
}

TEST(StreamFilters, VerifyIsZeroOrOne) {
  for (auto [q, want] : {std::pair{"", false}, {"verify=1", true}, {"verify=0", false}, {"verify=", false}}) {
    Handshake h{q};
    ASSERT_EQ(h.check().status, 0) << q;
    EXPECT_EQ(h.ticket.verify, want) << q;
  }
  for (const char* q : {"verify=2", "verify=yes", "verify=true", "verify=01"}) {
    Handshake h{q};
    HandshakeError e = h.check();
    EXPECT_EQ(e.status, 400) << q;
    EXPECT_STREQ(e.error, err::kBadVerify) << q;
  }
}

}  // namespace
}  // namespace oddsrelay::api
