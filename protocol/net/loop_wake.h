// Wakes a libuv loop from another thread: what the delivery thread calls
// once a batch to hand a relay loop its frames (relay/relay_loop.h).
//
// libuv's uv_async_send marks its handle busy, writes the loop's eventfd,
// then marks it done; the woken loop spins while the handle is busy (997
// pauses, then sched_yield, again and again). With the waker and the loop
// on one core, the woken loop preempts the waker between its write and
// "done", so the wake began with that spin: 7-23% of an idle relay loop's
// samples (perf/PROFILE.md s28). Here the waker's last step is the write:
// it sets a flag (one atomic exchange, which also orders its queued work
// before the wake) and writes only when the flag was clear; the loop
// clears the flag before running the callback, so work queued after that
// wakes it again and work queued before it is seen by the callback.
#pragma once

#include <uv.h>

#include <atomic>

#include "protocol/net/polled_fd.h"

namespace oddsrelay::net {

class LoopWake {
 public:
  using Callback = void (*)(void* arg);

  LoopWake() = default;
  LoopWake(const LoopWake&) = delete;
  LoopWake& operator=(const LoopWake&) = delete;

  // Loop thread. `cb(arg)` runs on the loop's thread after each wake
  // (several send()s may share one). False with errno when no eventfd.
  bool init(uv_loop_t* loop, Callback cb, void* arg);
  // Any thread.
  void send();
  // Loop thread: no callback after it. The eventfd stays open until the
  // destructor, so a send() racing a shutdown writes to it, never to an fd
  // the process has since opened under the same number.
  void close();

 private:
  static void on_readable(uv_poll_t* h, int status, int events);

  PolledFd fd_;
  Callback cb_ = nullptr;
  void* arg_ = nullptr;
  std::atomic<bool> pending_{false};
};

}  // namespace oddsrelay::net
