#include "protocol/http_request.h"

#include <gtest/gtest.h>

namespace oddsrelay::http {
namespace {

ParseResult parse(const std::string& s, Request& r, Limits l = {}) {
  RequestParser p(l);
  return p.parse(s, r);
}

void expect_error(const std::string& s, int status) {
  Request r;
  ParseResult res = parse(s, r);
  EXPECT_EQ(res.status, ParseStatus::Error) << s.substr(0, 80);
  EXPECT_EQ(res.error_status, status) << s.substr(0, 80) << " -> " << res.error;
}

}  // namespace

TEST(HttpRequest, ParsesAGet) {
  Request r;
  std::string s = "GET /v1/odds?ids=1,2&x=%41+b HTTP/1.1\r\nHost: a\r\nX-API-Key:  k1 \r\n\r\n";
  ParseResult res = parse(s, r);
  ASSERT_EQ(res.status, ParseStatus::Complete) << res.error;
  EXPECT_EQ(res.consumed, s.size());
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.path, "/v1/odds");
  EXPECT_EQ(r.query, "ids=1,2&x=%41+b");
  EXPECT_EQ(r.header("x-api-key"), "k1");
  EXPECT_TRUE(r.keep_alive);
  EXPECT_EQ(query_param(r.query, "ids"), "1,2");
  EXPECT_EQ(query_param(r.query, "x"), "A b");
  EXPECT_EQ(query_param(r.query, "y"), std::nullopt);
}

// A value that decodes to bytes which are not UTF-8 reads as U+FFFD per
// bad byte, valid characters kept: an answer echoing it stays JSON.
TEST(HttpRequest, AQueryValueThatIsNotUtf8ReadsAsReplacementCharacters) {
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(query_param("ids=%FF%FEa,%C3%A9", "ids"), r + r + "a,\xC3\xA9");
  EXPECT_EQ(query_param("ids=%C0%AF", "ids"), r + r);         // overlong '/'
  EXPECT_EQ(query_param("ids=%ED%A0%80", "ids"), r + r + r);  // a surrogate
  EXPECT_EQ(query_param("ids=\xff"
                        "1",
                        "ids"),
            r + "1");
  EXPECT_EQ(query_param("ids=%E2%82", "ids"), r + r);  // cut short
}

TEST(HttpRequest, WaitsForTheWholeRequestAndBody) {
  std::string s = "POST /v1/odds HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello";
  RequestParser p;
  Request r;
  for (size_t n = 0; n < s.size(); ++n)
    ASSERT_EQ(p.parse(std::string_view(s).substr(0, n), r).status, ParseStatus::Incomplete) << n;
  ParseResult res = p.parse(s, r);
  ASSERT_EQ(res.status, ParseStatus::Complete);
  EXPECT_EQ(r.body, "hello");
}

// Headers asking `Expect: 100-continue` with the body still to come say
// so (the server then sends 100 once); with the body there, or in HTTP/1.0,
// or another expectation, they do not.
TEST(HttpRequest, AnExpectedContinueIsSaidWhileTheBodyIsToCome) {
  RequestParser p;
  Request r;
  const std::string head = "POST /v1/odds HTTP/1.1\r\nHost: a\r\nExpect: 100-Continue\r\nContent-Length: 5\r\n\r\n";
  ParseResult res = p.parse(head, r);
  EXPECT_EQ(res.status, ParseStatus::Incomplete);
  EXPECT_TRUE(res.expect_continue);
  res = p.parse(head + "he", r);
  EXPECT_TRUE(res.expect_continue);
  res = p.parse(head + "hello", r);
  EXPECT_EQ(res.status, ParseStatus::Complete);
  EXPECT_FALSE(res.expect_continue);
  for (std::string other : {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n",
                            "POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n",
                            "POST / HTTP/1.1\r\nHost: a\r\nExpect: 200-ok\r\nContent-Length: 5\r\n\r\n",
                            "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n"}) {
    RequestParser q;
    EXPECT_FALSE(q.parse(other, r).expect_continue) << other;
  }
}

TEST(HttpRequest, PipelinedRequestsAreConsumedOneAtATime) {
  std::string one = "GET /a HTTP/1.1\r\nHost: a\r\n\r\n",
              two = "GET /b HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";
  std::string buf = one + two;
  RequestParser p;
  Request r;
  ParseResult res = p.parse(buf, r);
  ASSERT_EQ(res.status, ParseStatus::Complete);
  EXPECT_EQ(r.path, "/a");
  EXPECT_EQ(res.consumed, one.size());
  p.reset();
  res = p.parse(std::string_view(buf).substr(res.consumed), r);
  ASSERT_EQ(res.status, ParseStatus::Complete);
  EXPECT_EQ(r.path, "/b");
  EXPECT_FALSE(r.keep_alive);
}

TEST(HttpRequest, Http10ClosesUnlessAskedToKeepAlive) {
  Request r;
  ASSERT_EQ(parse("GET / HTTP/1.0\r\n\r\n", r).status, ParseStatus::Complete);
  EXPECT_FALSE(r.keep_alive);
  ASSERT_EQ(parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", r).status, ParseStatus::Complete);
  EXPECT_TRUE(r.keep_alive);
}

TEST(HttpRequest, Bounds) {
  expect_error("GET /" + std::string(9000, 'a') + " HTTP/1.1\r\nHost: a\r\n\r\n", 414);
  expect_error("GET /" + std::string(9000, 'a'), 414);  // still arriving, already too long
  std::string many = "GET / HTTP/1.1\r\nHost: a\r\n";
  for (int i = 0; i < 101; ++i) many += "X-" + std::to_string(i) + ": v\r\n";
  expect_error(many + "\r\n", 431);
  expect_error("GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + std::string(17000, 'v') + "\r\n\r\n", 431);
  expect_error("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1048577\r\n\r\n", 413);
}

TEST(HttpRequest, NoSmuggling) {
  expect_error("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\nabc", 400);
  expect_error("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400);
  expect_error("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", 411);
  expect_error("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400);
  expect_error("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1e3\r\n\r\n", 400);
  expect_error("GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n folded\r\n\r\n", 400);
  expect_error("GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400);
  expect_error("GET / HTTP/1.1\r\nHost: a\nX: 1\r\n\r\n", 400);
  expect_error("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", 400);  // which host?
  expect_error("GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n", 400);
}

TEST(HttpRequest, MalformedRequestLines) {
  expect_error("GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400);
  expect_error("get / HTTP/1.1\r\nHost: a\r\n\r\n", 400);
  expect_error("GET noslash HTTP/1.1\r\nHost: a\r\n\r\n", 400);
  expect_error("GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505);
  expect_error("GET / FTP/1.1\r\nHost: a\r\n\r\n", 400);
  expect_error("GET /\x01 HTTP/1.1\r\nHost: a\r\n\r\n", 400);
  expect_error("GET / HTTP/1.1\r\n\r\n", 400);  // no Host
}

// A request whose lines end in a bare LF never holds the CRLF CRLF that ends
// its headers: it is refused as soon as the LF arrives, not after the
// header timeout, in whichever read the LF comes; a CRLF split across two
// reads is not a bare LF.
TEST(HttpRequest, ABareLfIsRefusedWithoutWaitingForTheHeadersEnd) {
  expect_error("GET / HTTP/1.1\nHost: a\n\n", 400);
  expect_error("GET / HTTP/1.1\nHost: a\n", 400);  // still arriving
  expect_error("GET / HTTP/1.1\r\nHost: a\n", 400);
  RequestParser p;
  Request r;
  std::string s = "GET / HTTP/1.1\r";
  EXPECT_EQ(p.parse(s, r).status, ParseStatus::Incomplete);
  s += "\nHost: a\r";
  EXPECT_EQ(p.parse(s, r).status, ParseStatus::Incomplete);
  s += "\nX: 1";
  EXPECT_EQ(p.parse(s, r).status, ParseStatus::Incomplete);
  s += "\n";
  ParseResult res = p.parse(s, r);
  EXPECT_EQ(res.status, ParseStatus::Error);
  EXPECT_STREQ(res.error, "Bare LF in header");
  RequestParser q;
  res = q.parse("GET / HTTP/1.1\n", r);
  EXPECT_EQ(res.status, ParseStatus::Error);
  EXPECT_STREQ(res.error, "Bare LF in request line");
}

// A client sending a byte at a time: each call resumes the search where the
// last one stopped (the scan position only moves forward, never past what
// was received, and never restarts), so the total work is linear in the
// request's size rather than quadratic.
TEST(HttpRequest, SlowClientCostsLinearWork) {
  std::string s = "GET / HTTP/1.1\r\nHost: a\r\nX-Pad: " + std::string(10000, 'p') + "\r\n\r\n";
  RequestParser p;
  Request r;
  size_t last = 0;
  for (size_t n = 1; n < s.size(); ++n) {
    ASSERT_EQ(p.parse(std::string_view(s).substr(0, n), r).status, ParseStatus::Incomplete);
    ASSERT_GE(p.scanned(), last) << "the search restarted at byte " << n;
    ASSERT_LE(p.scanned(), n);
    ASSERT_GE(p.scanned() + 4, n) << "bytes received but not looked at";
    last = p.scanned();
  }
  EXPECT_EQ(p.parse(s, r).status, ParseStatus::Complete);
}

}  // namespace oddsrelay::http
