// The listener's promise that no request can end the process: a handler
// that throws costs its own request a 500, is counted, and the server goes
// on serving that loop's other connections and new ones.
#include "rest/http_server.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "protocol/http_response.h"
#include "tests/test_util.h"

namespace oddsrelay::rest {
namespace {

// Answers 200 "ok", except /boom (throws before writing) and /half (writes
// part of a response, then throws).
class Throwing : public HttpHandler {
 public:
  void handle(const http::Request& req, Peer&, net::OutQueue& out, Takeover&) override {
    if (req.path == "/boom") throw std::runtime_error("a bug in a handler");
    if (req.path == "/half") {
      out.append("HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n");
      out.share(net::make_shared_bytes("partial"));
      throw std::logic_error("half a response");
    }
    http::ResponseHead h;
    h.keep_alive = req.keep_alive;
    http::append_response(out.tail(), h, "\"ok\"");
  }
  void refuse(int status, const char* why, std::string& out) override {
    http::ResponseHead h;
    h.status = status;
    h.keep_alive = false;
    http::append_response(out, h, std::string("{\"error\":\"") + why + "\"}");
  }
};

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(HttpServer, HandlerExceptionAnswers500AndTheServerGoesOn) {
  Throwing handler;
  HttpServerOptions o;
  o.port = 0;  // the kernel's pick
  HttpServer server(o, handler);
  std::string err;
  ASSERT_TRUE(server.start(err)) << err;
  const uint16_t port = server.port();
  ASSERT_NE(port, 0);

  std::string r = test::exchange(port, "GET /boom HTTP/1.1\r\nHost: t\r\n\r\n");
  EXPECT_EQ(r.rfind("HTTP/1.1 500 ", 0), 0u) << r;
  EXPECT_NE(r.find("\r\n\r\n{\"error\":\"Internal server error\"}"), std::string::npos) << r;
  EXPECT_EQ(server.internal_errors(), 1u);

  // Pipelined: the answer before the failing request stands, the failing
  // one's half-written bytes are dropped for the 500, and the connection
  // closes after it (the request behind it is not answered).
  r = test::exchange(port,
                     "GET /ok HTTP/1.1\r\nHost: t\r\n\r\n"
                     "GET /half HTTP/1.1\r\nHost: t\r\n\r\n"
                     "GET /ok HTTP/1.1\r\nHost: t\r\n\r\n");
  EXPECT_EQ(count(r, "HTTP/1.1 200 "), 1u) << r;
  EXPECT_EQ(count(r, "HTTP/1.1 500 "), 1u) << r;
  EXPECT_EQ(r.find("partial"), std::string::npos) << r;
  EXPECT_LT(r.find("HTTP/1.1 200 "), r.find("HTTP/1.1 500 "));
  EXPECT_EQ(server.internal_errors(), 2u);

  // New connections are served as before.
  r = test::exchange(port, "GET /ok HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(r.rfind("HTTP/1.1 200 ", 0), 0u) << r;
  EXPECT_EQ(server.requests(), 4u);  // the request behind the failed one was never taken
  server.stop();
}

// Answers with the index of the loop that served the connection.
class WhichLoop : public HttpHandler {
 public:
  void handle(const http::Request& req, Peer& peer, net::OutQueue& out, Takeover&) override {
    http::ResponseHead h;
    h.keep_alive = req.keep_alive;
    http::append_response(out.tail(), h, "loop=" + std::to_string(peer.loop));
  }
  void refuse(int, const char*, std::string&) override {}
};

// With several loops, loop 0 accepts and deals connections out in turn;
// each connection stays on its loop for all its requests.
TEST(HttpServer, ConnectionsAreDealtToTheLoopsInTurn) {
  WhichLoop handler;
  HttpServerOptions o;
  o.port = 0;
  o.threads = 3;
  HttpServer server(o, handler);
  std::string err;
  ASSERT_TRUE(server.start(err)) << err;
  ASSERT_EQ(server.loop_count(), 3u);
  for (int i = 0; i < 6; ++i) {
    const std::string r = test::exchange(server.port(),
                                         "GET /a HTTP/1.1\r\nHost: t\r\n\r\n"
                                         "GET /b HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    const std::string want = "loop=" + std::to_string(i % 3);
    EXPECT_EQ(count(r, want), 2u) << i << r;
    EXPECT_EQ(count(r, "loop="), 2u) << r;
  }
  EXPECT_EQ(server.loop_requests(), (std::vector<uint64_t>{4, 4, 4}));
  EXPECT_EQ(server.requests(), 12u);
  server.stop();
}

}  // namespace
}  // namespace oddsrelay::rest
