// net::Conn (conn.h): the socket's libuv callbacks, the write path and the
// sweep's checks.
#include "protocol/net/conn.h"

#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "protocol/net/turn_writer.h"

namespace oddsrelay::net {

struct ConnCallbacks {
  static Conn* of(uv_handle_t* h) { return static_cast<Conn*>(h->data); }
  static void alloc(uv_handle_t* h, size_t, uv_buf_t* b) {
    ReadBuffer* rb = of(h)->rb_;
    *b = uv_buf_init(rb->bytes, sizeof rb->bytes);
  }
  static void read(uv_stream_t* s, ssize_t n, const uv_buf_t* b) {
    Conn* c = of(reinterpret_cast<uv_handle_t*>(s));
    if (c->closed()) return;
    if (n < 0) {
      c->handler_->on_read_error(*c);
      return;
    }
    if (n == 0) return;
    c->last_active = c->now();
    c->handler_->on_read(*c, b->base, static_cast<size_t>(n));
  }
  static void written(uv_write_t* req, int status) {
    Conn* c = static_cast<Conn*>(req->data);
    const size_t bytes = std::exchange(c->unsent_, 0);
    c->write_queue_seen_ = 0;
    if (status == 0) c->last_active = c->last_written = c->now();
    c->handler_->on_written(*c, status, bytes);
    if (c->state_ == ConnState::Draining && !c->writing()) c->close();
  }
  static void closed(uv_handle_t* h) {
    Conn* c = of(h);
    c->handler_->on_closed(*c);  // may free c
  }
};

bool Conn::open(uv_loop_t* loop, int fd, ConnHandler& h, ReadBuffer& rb, void* own, bool read) {
  handler_ = &h;
  rb_ = &rb;
  owner = own;
  uv_tcp_init(loop, &tcp_);
  tcp_.data = this;
  wreq_.data = this;
  last_active = last_written = now();
  state_ = ConnState::Paused;
  if (uv_tcp_open(&tcp_, fd) != 0) {
    ::close(fd);
    close();
    return false;
  }
  uv_tcp_nodelay(&tcp_, 1);
  if (read) resume();
  return true;
}

void Conn::pause() {
  if (state_ != ConnState::Open) return;
  uv_read_stop(reinterpret_cast<uv_stream_t*>(&tcp_));
  state_ = ConnState::Paused;
}

void Conn::resume() {
  if (state_ != ConnState::Paused) return;
  state_ = ConnState::Open;
  uv_read_start(reinterpret_cast<uv_stream_t*>(&tcp_), ConnCallbacks::alloc, ConnCallbacks::read);
}

void Conn::drain() {
  if (state_ == ConnState::Closed || state_ == ConnState::Draining) return;
  if (state_ == ConnState::Open) uv_read_stop(reinterpret_cast<uv_stream_t*>(&tcp_));
  state_ = ConnState::Draining;
  if (!writing()) close();
}

void Conn::close() {
  if (state_ == ConnState::Closed) return;
  if (queued_in_) queued_in_->submit();  // uv_close closes the descriptor now
  const bool opened = state_ != ConnState::Idle;
  state_ = ConnState::Closed;
  if (!opened) return;
  uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), ConnCallbacks::closed);
}

ssize_t Conn::write(uv_buf_t* bufs, unsigned n) {
  // Straight into the socket when it has room (the common case: no
  // request, no callback); libuv queues only what does not fit.
  int took = uv_try_write(reinterpret_cast<uv_stream_t*>(&tcp_), bufs, n);
  if (took == UV_EAGAIN) took = 0;
  if (took < 0) return took;
  return write_rest(bufs, n, static_cast<size_t>(took));
}

ssize_t Conn::write_rest(uv_buf_t* bufs, unsigned n, size_t took) {
  size_t total = 0;
  for (unsigned i = 0; i < n; ++i) total += bufs[i].len;
  if (took > 0) last_active = last_written = now();
  if (took == total) return static_cast<ssize_t>(took);
  size_t skip = took;
  unsigned i = 0;
  while (skip >= bufs[i].len) skip -= bufs[i++].len;
  bufs[i].base += skip;
  bufs[i].len -= static_cast<unsigned>(skip);
  const int rc = uv_write(&wreq_, reinterpret_cast<uv_stream_t*>(&tcp_), bufs + i, n - i, ConnCallbacks::written);
  if (rc != 0) return rc;
  unsent_ = total - took;
  return static_cast<ssize_t>(took);
}

ssize_t Conn::sent(uv_buf_t* bufs, unsigned n, ssize_t result) {
  if (result == -EAGAIN) result = 0;
  if (result < 0) return result;
  return write_rest(bufs, n, static_cast<size_t>(result));
}

int Conn::fd() const {
  uv_os_fd_t fd = -1;
  return uv_fileno(reinterpret_cast<const uv_handle_t*>(&tcp_), &fd) == 0 ? fd : -1;
}

void Conn::note_progress(uint64_t t) {
  const size_t wq = uv_stream_get_write_queue_size(reinterpret_cast<const uv_stream_t*>(&tcp_));
  size_t outq = kernel_unsent_seen_;
  const int f = fd();
  int unsent = 0;
  if (f >= 0 && ::ioctl(f, SIOCOUTQ, &unsent) == 0) outq = static_cast<size_t>(unsent);
  if (wq < write_queue_seen_ || outq < kernel_unsent_seen_) last_written = t;
  write_queue_seen_ = wq;
  kernel_unsent_seen_ = outq;
}

Expiry Conn::expired(uint64_t t, uint64_t limit, size_t owed, bool busy) const {
  const uint64_t quiet = t - last_active;
  if (owed > 0) return quiet > limit ? Expiry::Stalled : Expiry::None;
  return !busy && quiet > limit ? Expiry::Idle : Expiry::None;
}

int Conn::dup_fd() const {
  const int f = fd();
  return f >= 0 ? ::dup(f) : -1;
}

bool Conn::peer_ip(std::array<uint8_t, 16>& ip) const {
  sockaddr_storage ss{};
  int len = sizeof ss;
  if (uv_tcp_getpeername(&tcp_, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return false;
  if (ss.ss_family == AF_INET) {
    ip[10] = ip[11] = 0xff;
    std::memcpy(ip.data() + 12, &reinterpret_cast<sockaddr_in*>(&ss)->sin_addr, 4);
    return true;
  }
  if (ss.ss_family == AF_INET6) {
    std::memcpy(ip.data(), &reinterpret_cast<sockaddr_in6*>(&ss)->sin6_addr, 16);
    return true;
  }
  return false;
}

}  // namespace oddsrelay::net
