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

#include "tests/net/loopback.h"

namespace oddsrelay::net {
namespace {

class ConnTest : public test::LoopbackTest {};

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
  EXPECT_TRUE(read_to_eof(got));
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
