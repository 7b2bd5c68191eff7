// The eventfd behind LoopWake (loop_wake.h).
#include "protocol/net/loop_wake.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace oddsrelay::net {

bool LoopWake::init(uv_loop_t* loop, Callback cb, void* arg) {
  cb_ = cb;
  arg_ = arg;
  return fd_.open(loop, ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC), on_readable, this);
}

void LoopWake::send() {
  // The exchange is a full barrier: what the caller queued before it is
  // visible to the loop's exchange that reads it (or a later one).
  if (pending_.exchange(true, std::memory_order_acq_rel)) return;
  const uint64_t one = 1;
  // A full counter (2^64 - 2 wakes unread) cannot happen; EINTR retries.
  while (::write(fd_.fd(), &one, sizeof one) < 0 && errno == EINTR) {
  }
}

void LoopWake::on_readable(uv_poll_t* h, int status, int) {
  auto* w = static_cast<LoopWake*>(h->data);
  uint64_t n;
  while (::read(w->fd_.fd(), &n, sizeof n) < 0 && errno == EINTR) {
  }
  (void)status;  // an eventfd reports no error of its own; the callback runs either way
  w->pending_.exchange(false, std::memory_order_acq_rel);
  w->cb_(w->arg_);
}

void LoopWake::close() { fd_.close(); }

}  // namespace oddsrelay::net
