// One io_uring submission for a loop turn's writes (issue 37): a loop that
// writes many sockets per turn queues each connection's write here instead
// of making one writev syscall per connection, submits them all at once and
// reaps the results before its turn ends. The sockets stay libuv's
// (conn.h): a write the socket takes only in part hands the rest to
// Conn::write_rest, the same uv_write path a partial uv_try_write takes, so
// what goes out and in what order does not depend on which path wrote it.
// Built only with liburing (Debian's liburing-dev); without it, or on a
// kernel that refuses io_uring_setup, open() fails and the owner writes with
// Conn::write. Loop thread only: the ring is made by the thread that submits.
#pragma once

#include <sys/socket.h>
#include <uv.h>

#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace oddsrelay::net {

class Conn;

class TurnWriter {
 public:
  TurnWriter();
  ~TurnWriter();
  TurnWriter(const TurnWriter&) = delete;
  TurnWriter& operator=(const TurnWriter&) = delete;

  // Sets up the ring; false (with the reason in `why`) when this build or
  // this kernel has no io_uring.
  bool open(std::string& why);
  bool on() const { return ring_ != nullptr; }
  const char* setup() const { return setup_; }  // the ring's setup flags, as words (logs)

  // Queues one send of `bufs` on c's socket for `tag`. The buffers and their
  // bytes must stay valid until complete() reports `tag`; one write per
  // connection at a time (Conn::queued()).
  void queue(Conn& c, const uv_buf_t* bufs, unsigned n, void* tag);
  size_t queued() const { return ops_.size(); }
  // Issues what is queued now (a socket about to close: its descriptor
  // must still be open when the kernel takes the send).
  void submit();

  struct Done {
    void* tag;
    ssize_t result;  // bytes the socket took, or -errno (-EAGAIN: none, it is full)
  };
  // Submits what is queued and waits for every completion: each queued
  // write's result, once. Valid until the next call.
  const std::vector<Done>& complete();

 private:
  struct Op {
    msghdr msg{};
    Conn* conn = nullptr;
    void* tag = nullptr;
  };
  struct Ring;
  std::unique_ptr<Ring> ring_;
  const char* setup_ = "";
  std::deque<Op> ops_;  // a deque: a queued op's msghdr never moves
  size_t unsubmitted_ = 0;
  std::vector<Done> done_;
};

}  // namespace oddsrelay::net
