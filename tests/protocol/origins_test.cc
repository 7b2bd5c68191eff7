// Web origins: allow_origins patterns, the origin a browser request names,
// the server's own pages, and --public-url.
#include "protocol/api/origins.h"

#include <gtest/gtest.h>

#include "protocol/api/api_keys.h"

namespace oddsrelay::api {
namespace {

WebOrigin origin(const char* s) {
  auto o = parse_origin(s, false);
  EXPECT_TRUE(o) << s;
  return o.value_or(WebOrigin{});
}

bool matches(const char* pattern, const char* o) {
  auto p = parse_origin_pattern(pattern);
  EXPECT_TRUE(p) << pattern;
  return p && p->matches(origin(o));
}

http::Request req(std::initializer_list<std::pair<const char*, const char*>> headers) {
  http::Request r;
  for (auto& [n, v] : headers) r.headers.push_back({n, v});
  return r;
}

TEST(Origins, ParsesAndNormalises) {
  WebOrigin o = origin("HTTPS://Desk.Example.COM");
  EXPECT_EQ(o.scheme, "https");
  EXPECT_EQ(o.host, "desk.example.com");
  EXPECT_EQ(o.port, 443);
  EXPECT_EQ(o.authority(), "desk.example.com");
  EXPECT_EQ(origin("https://desk.example.com:443"), o);
  EXPECT_EQ(origin("http://127.0.0.1:8443").authority(), "127.0.0.1:8443");
  EXPECT_EQ(origin("http://[::1]:8080").host, "[::1]");
  EXPECT_EQ(origin("http://[::1]:8080").port, 8080);
  EXPECT_EQ(origin("http://a.example/").host, "a.example");  // one trailing '/' is fine
  for (const char* bad :
       {"null", "desk.example.com", "ftp://a.example", "https://", "https://a.example:0", "https://a.example:65536",
        "https://a.example:", "https://u@a.example", "https://a.example/path", "https://a b.example", "https://[::1"})
    EXPECT_FALSE(parse_origin(bad, false)) << bad;
  auto referer = parse_origin("https://desk.example.com:8443/page?x=1", true);
  ASSERT_TRUE(referer);
  EXPECT_EQ(referer->authority(), "desk.example.com:8443");
}

TEST(Origins, ExactAndWildcardPatterns) {
  EXPECT_TRUE(matches("https://desk.example.com", "https://desk.example.com"));
  EXPECT_TRUE(matches("https://desk.example.com", "https://DESK.example.com:443"));
  EXPECT_FALSE(matches("https://desk.example.com", "http://desk.example.com"));        // scheme
  EXPECT_FALSE(matches("https://desk.example.com", "https://desk.example.com:8443"));  // port
  EXPECT_FALSE(matches("https://desk.example.com", "https://evil-desk.example.com"));
  EXPECT_TRUE(matches("https://*.example.com", "https://a.example.com"));
  EXPECT_TRUE(matches("https://*.example.com", "https://a.b.example.com"));
  EXPECT_FALSE(matches("https://*.example.com", "https://example.com"));      // not the domain itself
  EXPECT_FALSE(matches("https://*.example.com", "https://evilexample.com"));  // a label boundary
  EXPECT_FALSE(matches("https://*.example.com", "https://example.com.evil.net"));
  EXPECT_TRUE(matches("http://*.example.com:8080", "http://x.example.com:8080"));
  EXPECT_FALSE(matches("http://*.example.com:8080", "http://x.example.com"));
  for (const char* bad : {"https://*", "https://*.", "https://a.*.example.com", "https://*example.com", "*.example.com",
                          "https://**.example.com"})
    EXPECT_FALSE(parse_origin_pattern(bad)) << bad;
}

TEST(Origins, TheBrowserOriginIsOriginElseReferer) {
  EXPECT_FALSE(browser_origin(req({{"Host", "odds.example.com"}})));  // server to server
  auto o = browser_origin(req({{"Origin", "https://desk.example.com"}, {"Referer", "https://other.example/x"}}));
  ASSERT_TRUE(o);
  EXPECT_EQ(o->host, "desk.example.com");
  o = browser_origin(req({{"Referer", "https://desk.example.com/board?id=1"}}));  // an iframe's page load
  ASSERT_TRUE(o);
  EXPECT_EQ(o->host, "desk.example.com");
  o = browser_origin(req({{"Origin", "null"}}));  // a sandboxed frame: an origin that matches nothing
  ASSERT_TRUE(o);
  EXPECT_TRUE(o->host.empty());
  EXPECT_FALSE(parse_origin_pattern("https://*.example.com")->matches(*o));
  EXPECT_TRUE(browser_origin(req({{"Origin", "https://*.example.com"}}))->host.empty());
}

TEST(Origins, OwnOriginIsTheHostOrThePublicUrl) {
  PublicUrl none, pub;
  std::string err;
  ASSERT_TRUE(parse_public_url("https://odds.example.com/", pub, err)) << err;
  auto r = req({{"Host", "127.0.0.1:8443"}});
  EXPECT_TRUE(own_origin(origin("https://127.0.0.1:8443"), r, none));
  EXPECT_TRUE(own_origin(origin("http://127.0.0.1:8443"), r, none));
  EXPECT_FALSE(own_origin(origin("https://127.0.0.1"), r, none));
  EXPECT_FALSE(own_origin(origin("https://odds.example.com"), r, none));
  EXPECT_TRUE(own_origin(origin("https://odds.example.com"), r, pub));
  EXPECT_FALSE(own_origin(origin("http://odds.example.com"), r, pub));
  EXPECT_FALSE(own_origin(WebOrigin{}, req({{"Host", ""}}), none));
}

TEST(Origins, PublicUrl) {
  PublicUrl p;
  std::string err;
  ASSERT_TRUE(parse_public_url("HTTPS://Odds.Example.com:443/", p, err)) << err;
  EXPECT_EQ(p.base, "https://odds.example.com");
  ASSERT_TRUE(parse_public_url("https://example.com:8443/odds//", p, err)) << err;
  EXPECT_EQ(p.base, "https://example.com:8443/odds");
  EXPECT_EQ(p.origin.authority(), "example.com:8443");
  for (const char* bad : {"odds.example.com", "ftp://x", "https://x/?a=1", "https://x/#f", "https://*.x", "https://"}) {
    PublicUrl q;
    EXPECT_FALSE(parse_public_url(bad, q, err)) << bad;
    EXPECT_NE(err.find("is not an http:// or https:// URL"), std::string::npos) << err;
  }
}

TEST(Origins, KeysFileAllowOrigins) {
  auto ks = KeyStore::parse(R"({"keys":[
    {"key":"k1","allow_origins":["https://desk.example.com","https://*.partners.example.com"]},
    {"key":"k2"}]})");
  const ApiKey* k = ks->find("k1");
  ASSERT_NE(k, nullptr);
  ASSERT_EQ(k->allow_origins.size(), 2u);
  EXPECT_TRUE(k->allows_origin(origin("https://desk.example.com")));
  EXPECT_TRUE(k->allows_origin(origin("https://a.partners.example.com")));
  EXPECT_FALSE(k->allows_origin(origin("https://partners.example.com")));
  EXPECT_FALSE(k->allows_origin(origin("https://evil.example.com")));
  EXPECT_FALSE(k->allows_origin(WebOrigin{}));
  EXPECT_TRUE(ks->find("k2")->allows_origin(origin("https://evil.example.com")));  // absent: any
  for (const char* bad : {R"({"keys":[{"key":"k","allow_origins":"https://a.example"}]})",
                          R"({"keys":[{"key":"k","allow_origins":["desk.example.com"]}]})",
                          R"({"keys":[{"key":"k","allow_origins":[7]}]})"}) {
    try {
      KeyStore::parse(bad);
      ADD_FAILURE() << bad;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("keys[0].allow_origins"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace oddsrelay::api
