// What the connection-layer tests share (conn_test.cc, turn_writer_test.cc):
// a real loopback TCP pair with small buffers, so large writes are partial,
// a handler that records what the connection reports, and a libuv loop the
// test spins while it reads the peer.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/net/conn.h"

namespace oddsrelay::net::test {

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

class LoopbackTest : public ::testing::Test {
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
  // Runs the loop and reads the peer until its end of stream; bounded.
  bool read_to_eof(std::string& got) {
    bool eof = false;
    for (int i = 0; i < 200000 && !eof; ++i) {
      uv_run(&loop, UV_RUN_NOWAIT);
      eof = p.take(got);
    }
    return eof;
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

}  // namespace oddsrelay::net::test
