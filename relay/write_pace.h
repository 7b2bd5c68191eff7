// How often a relay loop may start a write pass (--relay-pace). A loop's
// time is its writes, one syscall per connection per pass, and a pass's
// cost hardly depends on how many batches each write carries
// (perf/PROFILE.md s38). Below saturation every batch gets a pass of its
// own. Near it, a pass of P ns followed at once by the next one keeps the
// loop writing all the time, and the engine and the delivery thread that
// share its core wait. With a pace of `pct` percent, a pass that began at
// t0 and lasted P lets the next one begin no sooner than t0 + P * 100 / pct:
// batches that arrive in between are taken and queued, and ride in that
// pass. The loop then spends at most pct% of its time in passes that a
// batch waited for.
//
// A frame is held at most P * (100 - pct) / pct past its arrival (after
// the end of the pass it just missed), never longer whatever follows: the
// bound is set by the last pass alone. A loop that writes little (P short)
// holds nothing noticeable; 0 or 100 turn the pace off.
#pragma once

#include <cstdint>

namespace oddsrelay::relay {

class WritePace {
 public:
  explicit WritePace(unsigned pct = 0) : pct_(pct > 0 && pct < 100 ? pct : 0) {}
  bool on() const { return pct_ != 0; }

  // How long a pass that would start at `now` must wait (0: start now).
  uint64_t wait_ns(uint64_t now) const { return now < next_ ? next_ - now : 0; }

  // A pass ran from `start` to `end` (the loop's monotonic ns).
  void passed(uint64_t start, uint64_t end) {
    if (pct_ == 0 || end < start) return;
    next_ = start + (end - start) * 100 / pct_;
  }

 private:
  unsigned pct_;
  uint64_t next_ = 0;  // no pass before this
};

}  // namespace oddsrelay::relay
