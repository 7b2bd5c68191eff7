// --trust-proxy and X-Forwarded-For: whose word the server takes for a
// client's address. The rule under test: only a trusted peer's header is
// read, right to left, and the first untrusted address is the client.
#include "rest/client_address.h"

#include <gtest/gtest.h>

namespace oddsrelay::rest {
namespace {

IpAddr ip(const char* s) { return *parse_ip(s); }

TrustedProxies trust(const char* list) {
  TrustedProxies t;
  std::string err;
  EXPECT_TRUE(TrustedProxies::parse(list, t, err)) << err;
  return t;
}

http::Request with_xff(std::initializer_list<const char*> values) {
  http::Request r;
  for (const char* v : values) r.headers.push_back({"X-Forwarded-For", v});
  return r;
}

std::string client(const char* peer, const http::Request& req, const TrustedProxies& t) {
  return format_ip(client_address(ip(peer), req, t));
}

TEST(TrustedProxies, ParsesListsAndNamesTheBadEntry) {
  TrustedProxies t = trust("127.0.0.1/32, 10.0.0.0/8,::1,2001:db8::/32");
  EXPECT_EQ(t.size(), 4u);
  EXPECT_TRUE(t.contains(ip("127.0.0.1")));
  EXPECT_FALSE(t.contains(ip("127.0.0.2")));
  EXPECT_TRUE(t.contains(ip("10.200.3.4")));
  EXPECT_TRUE(t.contains(ip("::1")));
  EXPECT_TRUE(t.contains(ip("2001:db8:ffff::9")));
  EXPECT_FALSE(t.contains(ip("2001:db9::1")));
  for (const char* bad : {"", "10.0.0.0/33", "10.0.0.0/8,", "proxy.local", "1.2.3.4,,5.6.7.8"}) {
    TrustedProxies x;
    std::string err;
    EXPECT_FALSE(TrustedProxies::parse(bad, x, err)) << bad;
    EXPECT_NE(err.find("is not an address or CIDR"), std::string::npos) << err;
  }
  std::string err;
  TrustedProxies x;
  ASSERT_FALSE(TrustedProxies::parse("10.0.0.0/8,bogus", x, err));
  EXPECT_EQ(err, "'bogus' is not an address or CIDR");
}

TEST(ClientAddress, AnUntrustedPeerIsTheClientWhateverItForwards) {
  const TrustedProxies none, t = trust("10.0.0.0/8");
  auto forged = with_xff({"198.51.100.7"});
  EXPECT_EQ(client("203.0.113.9", forged, none), "203.0.113.9");
  EXPECT_EQ(client("203.0.113.9", forged, t), "203.0.113.9");
  EXPECT_EQ(client("10.1.1.1", forged, none), "10.1.1.1");  // nothing trusted by default
}

TEST(ClientAddress, TheRightMostUntrustedEntryIsTheClient) {
  const TrustedProxies t = trust("10.0.0.0/8,127.0.0.1");
  // nginx appends the address it saw; what the client wrote stays on the left.
  EXPECT_EQ(client("10.0.0.5", with_xff({"198.51.100.7"}), t), "198.51.100.7");
  EXPECT_EQ(client("10.0.0.5", with_xff({"192.0.2.1, 198.51.100.7"}), t), "198.51.100.7");
  // Two of our proxies in a row are skipped.
  EXPECT_EQ(client("127.0.0.1", with_xff({"192.0.2.1, 198.51.100.7, 10.9.9.9"}), t), "198.51.100.7");
  // Several header lines are one list, in order.
  EXPECT_EQ(client("10.0.0.5", with_xff({"192.0.2.1", "198.51.100.7,10.2.2.2"}), t), "198.51.100.7");
  // No header: the proxy itself.
  EXPECT_EQ(client("10.0.0.5", http::Request{}, t), "10.0.0.5");
  // Every entry trusted: the left-most.
  EXPECT_EQ(client("10.0.0.5", with_xff({"10.3.3.3, 10.4.4.4"}), t), "10.3.3.3");
  // Other headers are not read.
  http::Request other;
  other.headers.push_back({"X-Real-IP", "198.51.100.7"});
  other.headers.push_back({"x-forwarded-for", "192.0.2.44"});  // any case of the name
  EXPECT_EQ(client("10.0.0.5", other, t), "192.0.2.44");
}

TEST(ClientAddress, GarbageStopsTheWalkAtTheProxyThatPassedItOn) {
  const TrustedProxies t = trust("10.0.0.0/8");
  EXPECT_EQ(client("10.0.0.5", with_xff({"198.51.100.7, unknown"}), t), "10.0.0.5");
  EXPECT_EQ(client("10.0.0.5", with_xff({"198.51.100.7, junk, 10.0.0.6"}), t), "10.0.0.6");
  EXPECT_EQ(client("10.0.0.5", with_xff({" , 198.51.100.7 ,"}), t), "198.51.100.7");  // empty entries skipped
}

TEST(ClientAddress, EntriesWithPortsAndV6) {
  EXPECT_EQ(format_ip(*parse_forwarded_entry("198.51.100.7:5050")), "198.51.100.7");
  EXPECT_EQ(format_ip(*parse_forwarded_entry("[2001:db8::1]:443")), "2001:db8::1");
  EXPECT_EQ(format_ip(*parse_forwarded_entry("[2001:db8::1]")), "2001:db8::1");
  EXPECT_EQ(format_ip(*parse_forwarded_entry(" 2001:db8::1 ")), "2001:db8::1");
  for (const char* bad : {"", "unknown", "[2001:db8::1", "[2001:db8::1]x", "10.0.0.0/8", "1.2.3", "_hidden"})
    EXPECT_FALSE(parse_forwarded_entry(bad)) << bad;
  const TrustedProxies t = trust("::1");
  EXPECT_EQ(client("::1", with_xff({"2001:db8::7"}), t), "2001:db8::7");
}

}  // namespace
}  // namespace oddsrelay::rest
