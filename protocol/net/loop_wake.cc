// The eventfd behind LoopWake (loop_wake.h).
#include "protocol/net/loop_wake.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace oddsrelay::net {

bool LoopWake::init(uv_loop_t* loop, Callback cb, void* arg) {
  fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd_ < 0) return false;
  cb_ = cb;
  arg_ = arg;
  const int rc = uv_poll_init(loop, &poll_, fd_);
  if (rc == 0) {
    poll_.data = this;
    if (uv_poll_start(&poll_, UV_READABLE, on_readable) == 0) return true;
    uv_close(reinterpret_cast<uv_handle_t*>(&poll_), nullptr);
  }
  ::close(fd_);
  fd_ = -1;
  errno = rc < 0 ? -rc : EINVAL;
  return false;
}

void LoopWake::send() {
  // The exchange is a full barrier: what the caller queued before it is
  // visible to the loop's exchange that reads it (or a later one).
  if (pending_.exchange(true, std::memory_order_acq_rel)) return;
  const uint64_t one = 1;
  // A full counter (2^64 - 2 wakes unread) cannot happen; EINTR retries.
  while (::write(fd_, &one, sizeof one) < 0 && errno == EINTR) {
  }
}

void LoopWake::on_readable(uv_poll_t* h, int status, int) {
  auto* w = static_cast<LoopWake*>(h->data);
  uint64_t n;
  while (::read(w->fd_, &n, sizeof n) < 0 && errno == EINTR) {
  }
  (void)status;  // an eventfd reports no error of its own; the callback runs either way
  w->pending_.exchange(false, std::memory_order_acq_rel);
  w->cb_(w->arg_);
}

void LoopWake::close() {
  if (fd_ >= 0 && !uv_is_closing(reinterpret_cast<uv_handle_t*>(&poll_)))
    uv_close(reinterpret_cast<uv_handle_t*>(&poll_), nullptr);
}

LoopWake::~LoopWake() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace oddsrelay::net
