// A one-shot timer in microseconds on a libuv loop: a timerfd polled by the
// loop. libuv's own timers count whole milliseconds from a clock cached at
// the start of each iteration, so a wait of 300 us becomes one of 1-2 ms;
// the relay loop's pace (relay/write_pace.h) holds a frame for a fraction
// of a write pass, often well under a millisecond, and needs the real
// figure.
#pragma once

#include <uv.h>

#include <cstdint>

#include "protocol/net/polled_fd.h"

namespace oddsrelay::net {

class LoopTimerUs {
 public:
  using Callback = void (*)(void* arg);

  // Loop thread. False with errno when no timerfd.
  bool init(uv_loop_t* loop, Callback cb, void* arg);
  // Loop thread: `cb(arg)` once, `us` microseconds from now (at least 1);
  // a start while armed moves the deadline.
  void start(uint64_t us);
  void stop();
  bool armed() const { return armed_; }
  // Loop thread: no callback after it.
  void close();

 private:
  static void on_readable(uv_poll_t* h, int status, int events);

  PolledFd fd_;
  Callback cb_ = nullptr;
  void* arg_ = nullptr;
  bool armed_ = false;
};

}  // namespace oddsrelay::net
