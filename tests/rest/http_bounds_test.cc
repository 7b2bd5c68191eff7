// The listener's bounds on unsent bytes (issue 42): a connection owing more
// than max_unsent is not read (its pipelined requests wait unread, not
// answered into memory), and past max_unsent_total for the process the
// connection that has gone longest without write progress is closed first,
// counted as closed_unsent_total. The answers are one shared body, queued
// by reference.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "protocol/http_response.h"
#include "rest/http_server.h"

namespace oddsrelay::rest {
namespace {

// Every request is answered with the same shared body.
class BigAnswers : public HttpHandler {
 public:
  explicit BigAnswers(size_t size) : body(net::make_shared_bytes(std::string(size, 'x'))) {}
  void handle(const http::Request& req, Peer&, net::OutQueue& out, Takeover&) override {
    handled.fetch_add(1);
    http::ResponseHead h;
    h.keep_alive = req.keep_alive;
    http::append_head(out.tail(), h, body->size());
    out.share(body);
  }
  void refuse(int, const char*, std::string&) override {}
  net::SharedBytes body;
  std::atomic<int> handled{0};
};

// A client that reads nothing until told: a small receive buffer, so the
// answers wait in the server, not in the kernel.
int connect_unread(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  const int small = 4096;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  return fd;
}

void send_requests(int fd, int n) {
  std::string reqs;
  for (int i = 0; i < n; ++i) reqs += "GET /big HTTP/1.1\r\nHost: t\r\n\r\n";
  ASSERT_EQ(::send(fd, reqs.data(), reqs.size(), 0), static_cast<ssize_t>(reqs.size()));
}

// Reads until `want` bytes came or the server closed; the bytes read.
size_t read_all(int fd, size_t want) {
  size_t got = 0;
  char buf[65536];
  for (ssize_t n; got < want && (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) got += static_cast<size_t>(n);
  return got;
}

template <class F>
bool eventually(F f) {
  for (int i = 0; i < 500; ++i, std::this_thread::sleep_for(std::chrono::milliseconds(10)))
    if (f()) return true;
  return false;
}

TEST(HttpBounds, PipelinedRequestsPastTheBoundWaitUnread) {
  BigAnswers handler(1 << 20);
  HttpServerOptions o;
  o.port = 0;
  o.max_unsent = 1 << 20;
  HttpServer server(o, handler);
  std::string err;
  ASSERT_TRUE(server.start(err)) << err;
  const int fd = connect_unread(server.port());
  send_requests(fd, 20);  // 20 MiB of answers asked for at once
  ASSERT_TRUE(eventually([&] { return server.stats().read_pauses.load() > 0; }))
      << handler.handled.load() << " answered, " << server.stats().unsent_bytes.load() << " unsent";
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // The kernel's buffers take a few MiB; the rest of the requests wait unread.
  EXPECT_LE(handler.handled.load(), 8);
  EXPECT_LE(server.stats().unsent_bytes.load(), (2u << 20) + 4096);  // the bound and one answer
  EXPECT_LE(handler.body.use_count(), 4);  // ours and the queued answers': references, not copies
  // Reading resumes them: every answer arrives, in full.
  const size_t head = std::string("HTTP/1.1 200 OK\r\n").size();
  EXPECT_GT(read_all(fd, 20 * ((1 << 20) + head)), 20u << 20);
  EXPECT_EQ(handler.handled.load(), 20);
  EXPECT_TRUE(eventually([&] { return server.stats().unsent_bytes.load() == 0; }));
  ::close(fd);
  server.stop();
}

// With one loop the two connections are its own to choose from; with two
// they are on different loops, which compare their stalest.
class StalestFirst : public testing::TestWithParam<uint32_t> {};

TEST_P(StalestFirst, OverTheTotalTheStalestConnectionIsClosedFirst) {
  BigAnswers handler(16 << 20);
  HttpServerOptions o;
  o.port = 0;
  o.max_unsent = 64 << 20;
  o.max_unsent_total = 20 << 20;
  o.threads = GetParam();
  HttpServer server(o, handler);
  std::string err;
  ASSERT_TRUE(server.start(err)) << err;
  const int stale = connect_unread(server.port());
  send_requests(stale, 1);
  ASSERT_TRUE(eventually([&] { return server.stats().unsent_bytes.load() > 8u << 20; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // no progress since
  const int fresh = connect_unread(server.port());
  send_requests(fresh, 1);
  ASSERT_TRUE(eventually([&] { return server.stats().closed_unsent_total.load() == 1; }));
  // The stale one was closed before all of its answer came; the fresh one
  // gets all of it.
  std::string head;
  http::ResponseHead h;
  http::append_head(head, h, 16 << 20);
  const size_t whole = head.size() + (16 << 20);
  EXPECT_LT(read_all(stale, whole), whole);
  EXPECT_EQ(read_all(fresh, whole), whole);
  EXPECT_EQ(server.stats().closed_unsent_total.load(), 1u);
  ::close(stale);
  ::close(fresh);
  server.stop();
}

INSTANTIATE_TEST_SUITE_P(HttpBounds, StalestFirst, testing::Values(1u, 2u));

}  // namespace
}  // namespace oddsrelay::rest
