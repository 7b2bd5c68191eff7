// PolledFd (polled_fd.h).
#include "protocol/net/polled_fd.h"

#include <unistd.h>

#include <cerrno>

namespace oddsrelay::net {

bool PolledFd::open(uv_loop_t* loop, int fd, uv_poll_cb cb, void* data) {
  if (fd < 0) return false;  // errno from the call that made it
  fd_ = fd;
  const int rc = uv_poll_init(loop, &poll_, fd_);
  if (rc == 0) {
    poll_.data = data;
    if (uv_poll_start(&poll_, UV_READABLE, cb) == 0) return true;
    uv_close(reinterpret_cast<uv_handle_t*>(&poll_), nullptr);
  }
  ::close(fd_);
  fd_ = -1;
  errno = rc < 0 ? -rc : EINVAL;
  return false;
}

void PolledFd::close() {
  if (fd_ >= 0 && !uv_is_closing(reinterpret_cast<uv_handle_t*>(&poll_)))
    uv_close(reinterpret_cast<uv_handle_t*>(&poll_), nullptr);
}

PolledFd::~PolledFd() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace oddsrelay::net
