// A descriptor a libuv loop polls for reading, owned: what LoopWake (an
// eventfd) and LoopTimerUs (a timerfd) are built on. The descriptor stays
// open until the destructor, after the poll handle is closed, so a late
// write from another thread (LoopWake::send) reaches it and never an fd
// the process has since opened under the same number.
#pragma once

#include <uv.h>

namespace oddsrelay::net {

class PolledFd {
 public:
  PolledFd() = default;
  ~PolledFd();
  PolledFd(const PolledFd&) = delete;
  PolledFd& operator=(const PolledFd&) = delete;

  // Loop thread: takes `fd` (closed here on failure) and polls it; `cb`
  // gets `data` as the handle's. False with errno on failure.
  bool open(uv_loop_t* loop, int fd, uv_poll_cb cb, void* data);
  // Loop thread: no callback after it.
  void close();
  int fd() const { return fd_; }

 private:
  uv_poll_t poll_{};
  int fd_ = -1;
};

}  // namespace oddsrelay::net
