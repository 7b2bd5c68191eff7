// The timerfd behind LoopTimerUs (loop_timer_us.h).
#include "protocol/net/loop_timer_us.h"

#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>

namespace oddsrelay::net {

bool LoopTimerUs::init(uv_loop_t* loop, Callback cb, void* arg) {
  cb_ = cb;
  arg_ = arg;
  return fd_.open(loop, ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC), on_readable, this);
}

void LoopTimerUs::start(uint64_t us) {
  if (us == 0) us = 1;  // an all-zero it_value would disarm it
  itimerspec t{};
  t.it_value.tv_sec = static_cast<time_t>(us / 1'000'000);
  t.it_value.tv_nsec = static_cast<long>(us % 1'000'000 * 1000);
  ::timerfd_settime(fd_.fd(), 0, &t, nullptr);
  armed_ = true;
}

void LoopTimerUs::stop() {
  if (!armed_) return;
  const itimerspec off{};
  ::timerfd_settime(fd_.fd(), 0, &off, nullptr);
  armed_ = false;
}

void LoopTimerUs::on_readable(uv_poll_t* h, int, int) {
  auto* t = static_cast<LoopTimerUs*>(h->data);
  uint64_t expirations;
  // Nothing to read: a stop() or a new start() after it fired.
  if (::read(t->fd_.fd(), &expirations, sizeof expirations) < 0) return;
  t->armed_ = false;
  t->cb_(t->arg_);
}

void LoopTimerUs::close() { fd_.close(); }

}  // namespace oddsrelay::net
