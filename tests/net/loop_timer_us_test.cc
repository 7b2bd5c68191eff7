// LoopTimerUs (protocol/net/loop_timer_us.h): it fires once, no sooner than
// asked and well within a millisecond's granularity of it, where a libuv
// timer would round up; a start while armed moves the deadline; a stopped
// timer does not fire.
#include "protocol/net/loop_timer_us.h"

#include <gtest/gtest.h>
#include <uv.h>

#include <vector>

namespace oddsrelay::net {
namespace {

struct TimedLoop {
  uv_loop_t loop;
  LoopTimerUs timer;
  uv_timer_t end;               // ends the run: 20 ms
  std::vector<uint64_t> fired;  // uv_hrtime() of each callback

  TimedLoop() {
    uv_loop_init(&loop);
    EXPECT_TRUE(timer.init(
        &loop, [](void* self) { static_cast<TimedLoop*>(self)->fired.push_back(uv_hrtime()); }, this));
    uv_timer_init(&loop, &end);
    end.data = this;
  }
  ~TimedLoop() { uv_loop_close(&loop); }
  void run() {
    uv_timer_start(
        &end,
        [](uv_timer_t* t) {
          auto* self = static_cast<TimedLoop*>(t->data);
          self->timer.close();
          uv_close(reinterpret_cast<uv_handle_t*>(&self->end), nullptr);
        },
        20, 0);
    uv_run(&loop, UV_RUN_DEFAULT);
  }
};

TEST(LoopTimerUs, FiresOnceNoSoonerThanAsked) {
  TimedLoop t;
  const uint64_t start = uv_hrtime();
  t.timer.start(300);
  EXPECT_TRUE(t.timer.armed());
  t.run();
  ASSERT_EQ(t.fired.size(), 1u);
  EXPECT_GE(t.fired[0] - start, 300'000u);
  // Within the run's 20 ms: a slow or sanitized machine wakes late, never early.
  EXPECT_LT(t.fired[0] - start, 20'000'000u);
  EXPECT_FALSE(t.timer.armed());
}

TEST(LoopTimerUs, AStartWhileArmedMovesTheDeadline) {
  TimedLoop t;
  const uint64_t start = uv_hrtime();
  t.timer.start(100);
  t.timer.start(5'000);
  t.run();
  ASSERT_EQ(t.fired.size(), 1u);
  EXPECT_GE(t.fired[0] - start, 5'000'000u);
}

TEST(LoopTimerUs, AStoppedTimerDoesNotFire) {
  TimedLoop t;
  t.timer.start(200);
  t.timer.stop();
  EXPECT_FALSE(t.timer.armed());
  t.run();
  EXPECT_TRUE(t.fired.empty());
}

}  // namespace
}  // namespace oddsrelay::net
