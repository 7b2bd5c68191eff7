// The connection layer (protocol/net/conn.h) on a real loopback TCP pair in
// a libuv loop: reads land in the handler and stop while paused; a write
// the socket cannot take at once goes out whole in order, the rest through
// one uv_write whose completion reports it; a close with a write in flight
// cancels it before the connection is freed; a draining connection closes
// only once its bytes are out; and the sweep's checks (idle, stalled, write
// progress as the kernel sees it).
#include "protocol/net/conn.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace oddsrelay::net {
namespace {

struct Recorder : ConnHandler {
  std::string read;
  int read_errors = 0, written_calls = 0, written_status = 1;
  size_t written_bytes = 0;
  std::vector<std::string> events;  // "written", "closed", in order
  bool freed = false;
  void on_read(Conn&, char* p, size_t n) override { read.append(p, n); }
  void on_read_error(Conn& c) override {
    ++read_errors;
    c.close();
  }
  void on_written(Conn&, int status, size_t bytes) override {
    ++written_calls;
    written_status = status;
    written_bytes = bytes;
    events.push_back("written");
  }
  void on_closed(Conn&) override {
    freed = true;
    events.push_back("closed");
  }
};

// A connected loopback pair: `ours` for the Conn, `peer` for the test
// (non-blocking), each with small buffers so large writes are partial.
struct Pair {
  int ours = -1, peer = -1;
  Pair() {
    int l = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    EXPECT_EQ(::bind(l, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(l, 1), 0);
    EXPECT_EQ(::getsockname(l, reinterpret_cast<sockaddr*>(&a), &len), 0);
    peer = ::socket(AF_INET, SOCK_STREAM, 0);
    const int small = 16 * 1024;
    ::setsockopt(peer, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    EXPECT_EQ(::connect(peer, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ours = ::accept(l, nullptr, nullptr);
    ::setsockopt(ours, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    ::close(l);
    ::fcntl(peer, F_SETFL, ::fcntl(peer, F_GETFL) | O_NONBLOCK);
  }
  ~Pair() {
    if (peer >= 0) ::close(peer);
  }
  // Reads what the peer has now (at most `max`); true at end of stream.
  bool take(std::string& got, size_t max = SIZE_MAX) {
    char buf[65536];
    while (got.size() < max) {
      const ssize_t n = ::recv(peer, buf, std::min(sizeof buf, max - got.size()), 0);
      if (n == 0) return true;
      if (n < 0) return false;
      got.append(buf, static_cast<size_t>(n));
    }
    return false;
  }
};

class ConnTest : public ::testing::Test {
 protected:
  void SetUp() override { uv_loop_init(&loop); }
  void TearDown() override {
    if (!c.closed()) c.close();
    uv_run(&loop, UV_RUN_DEFAULT);
    EXPECT_EQ(uv_loop_close(&loop), 0);
  }
  // Runs the loop while `more` holds, reading the peer meanwhile; bounded.
  template <class F>
  void spin(F&& more, std::string* got = nullptr) {
    for (int i = 0; i < 200000 && more(); ++i) {
      uv_run(&loop, UV_RUN_NOWAIT);
      if (got) p.take(*got);
    }
  }
  static std::string pattern(size_t n) {
    std::string s(n, '\0');
    for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7 + i / 251) % 26);
    return s;
  }
  uv_loop_t loop;
  Pair p;
  Recorder h;
  ReadBuffer rb;
  Conn c;
};

TEST_F(ConnTest, ReadsReachTheHandlerAndStopWhilePaused) {
  ASSERT_TRUE(c.open(&loop, p.ours, h, rb, &h));
  EXPECT_EQ(c.owner, &h);
  EXPECT_EQ(c.state(), ConnState::Open);
  ASSERT_EQ(::send(p.peer, "hello", 5, 0), 5);
  spin([&] { return h.read.size() < 5; });
  EXPECT_EQ(h.read, "hello");
  c.pause();
  EXPECT_EQ(c.state(), ConnState::Paused);
  ASSERT_EQ(::send(p.peer, "more", 4, 0), 4);
  for (int i = 0; i < 100; ++i) uv_run(&loop, UV_RUN_NOWAIT);
  EXPECT_EQ(h.read, "hello");  // nothing read while paused
  c.resume();
  spin([&] { return h.read.size() < 9; });
  EXPECT_EQ(h.read, "hellomore");
  ::shutdown(p.peer, SHUT_WR);
  spin([&] { return !h.freed; });
  EXPECT_EQ(h.read_errors, 1);
  EXPECT_TRUE(h.freed);
}

TEST_F(ConnTest, APartialWriteGoesOutWholeAndInOrder) {
  ASSERT_TRUE(c.open(&loop, p.ours, h, rb, &h));
  const std::string a = pattern(3 << 20), b = "tail";
  std::string first = a, second = b;  // must stay valid until on_written
  uv_buf_t bufs[2] = {uv_buf_init(first.data(), static_cast<unsigned>(first.size())),
                      uv_buf_init(second.data(), static_cast<unsigned>(second.size()))};
  const ssize_t took = c.write(bufs, 2);
  ASSERT_GE(took, 0);
  ASSERT_LT(static_cast<size_t>(took), a.size());  // the socket's buffers are far smaller
  EXPECT_TRUE(c.writing());
  EXPECT_EQ(c.unsent(), a.size() + b.size() - static_cast<size_t>(took));
  const size_t owed = c.unsent();
  std::string got;
  spin([&] { return h.written_calls == 0; }, &got);
  EXPECT_EQ(h.written_calls, 1);
  EXPECT_EQ(h.written_status, 0);
  EXPECT_EQ(h.written_bytes, owed);
  EXPECT_FALSE(c.writing());
  spin([&] { return got.size() < a.size() + b.size(); }, &got);
  EXPECT_TRUE(got == a + b) << "bytes lost, repeated or reordered (got " << got.size() << ")";
}

TEST_F(ConnTest, ASmallWriteIsTakenAtOnceWithNoCallback) {
  ASSERT_TRUE(c.open(&loop, p.ours, h, rb, &h));
  std::string s = "HTTP/1.1 200 OK\r\n\r\n";
  uv_buf_t b = uv_buf_init(s.data(), static_cast<unsigned>(s.size()));
  EXPECT_EQ(c.write(&b, 1), static_cast<ssize_t>(s.size()));
  EXPECT_FALSE(c.writing());
  for (int i = 0; i < 100; ++i) uv_run(&loop, UV_RUN_NOWAIT);
  EXPECT_EQ(h.written_calls, 0);
  std::string got;
  p.take(got);
  EXPECT_EQ(got, s);
}

TEST_F(ConnTest, ACloseWithAWriteInFlightCancelsItBeforeTheConnectionIsFreed) {
  ASSERT_TRUE(c.open(&loop, p.ours, h, rb, &h));
  std::string big = pattern(3 << 20);
  uv_buf_t b = uv_buf_init(big.data(), static_cast<unsigned>(big.size()));
  ASSERT_GE(c.write(&b, 1), 0);
  ASSERT_TRUE(c.writing());
  c.close();
  EXPECT_TRUE(c.closed());
  c.close();  // a second close is nothing
  spin([&] { return !h.freed; });
  ASSERT_EQ(h.events, (std::vector<std::string>{"written", "closed"}));
  EXPECT_LT(h.written_status, 0);  // cancelled
}

TEST_F(ConnTest, ADrainingConnectionClosesOnceItsBytesAreOut) {
  ASSERT_TRUE(c.open(&loop, p.ours, h, rb, &h));
  std::string big = pattern(2 << 20);
  uv_buf_t b = uv_buf_init(big.data(), static_cast<unsigned>(big.size()));
  ASSERT_GE(c.write(&b, 1), 0);
  ASSERT_TRUE(c.writing());
  c.drain();
  EXPECT_EQ(c.state(), ConnState::Draining);
  for (int i = 0; i < 100; ++i) uv_run(&loop, UV_RUN_NOWAIT);
  EXPECT_FALSE(h.freed);  // the peer has not read: still writing
  std::string got;
  bool eof = false;
  for (int i = 0; i < 200000 && !eof; ++i) {
    uv_run(&loop, UV_RUN_NOWAIT);
    eof = p.take(got);
  }
  EXPECT_TRUE(eof);
  EXPECT_TRUE(got == big) << got.size();
  EXPECT_TRUE(h.freed);
  EXPECT_EQ(h.written_status, 0);
}

TEST_F(ConnTest, ADrainWithNothingToWriteClosesAtOnce) {
  ASSERT_TRUE(c.open(&loop, p.ours, h, rb, &h));
  c.drain();
  EXPECT_TRUE(c.closed());
  spin([&] { return !h.freed; });
  EXPECT_TRUE(h.freed);
}

TEST_F(ConnTest, TheSweepFindsIdleAndStalledConnections) {
  ASSERT_TRUE(c.open(&loop, p.ours, h, rb, &h));
  const uint64_t t0 = c.last_active;
  EXPECT_EQ(c.expired(t0 + 100, 100, 0, false), Expiry::None);
  EXPECT_EQ(c.expired(t0 + 101, 100, 0, false), Expiry::Idle);
  EXPECT_EQ(c.expired(t0 + 101, 100, 0, /*busy=*/true), Expiry::None);  // a request under way is not idle
  EXPECT_EQ(c.expired(t0 + 101, 100, 5, false), Expiry::Stalled);
  EXPECT_EQ(c.expired(t0 + 101, 100, 5, true), Expiry::Stalled);
  // The sweep's verdict closes it.
  if (c.expired(t0 + 101, 100, 0, false) != Expiry::None) c.close();
  spin([&] { return !h.freed; });
  EXPECT_TRUE(h.freed);
}

TEST_F(ConnTest, WriteProgressCountsWhatTheKernelSentSinceTheLastCheck) {
  ASSERT_TRUE(c.open(&loop, p.ours, h, rb, &h));
  std::string big = pattern(3 << 20);
  uv_buf_t b = uv_buf_init(big.data(), static_cast<unsigned>(big.size()));
  ASSERT_GE(c.write(&b, 1), 0);
  for (int i = 0; i < 100; ++i) uv_run(&loop, UV_RUN_NOWAIT);
  c.last_written = 0;
  c.note_progress(10);  // the first look: nothing to compare with
  c.note_progress(20);  // the peer reads nothing: no progress
  EXPECT_EQ(c.last_written, 0u);
  std::string got;
  uint64_t t = 30;
  for (int i = 0; i < 200000 && c.last_written == 0; ++i, ++t) {
    p.take(got, got.size() + 4096);  // the client takes a little
    c.note_progress(t);
  }
  EXPECT_GT(c.last_written, 20u);
}

TEST_F(ConnTest, AFailedOpenClosesTheConnection) {
  Conn bad;
  EXPECT_FALSE(bad.open(&loop, -1, h, rb, &h));  // no such descriptor
  EXPECT_TRUE(bad.closed());
  spin([&] { return !h.freed; });
  EXPECT_TRUE(h.freed);  // the owner frees it in on_closed, as after any close
}

}  // namespace
}  // namespace oddsrelay::net
