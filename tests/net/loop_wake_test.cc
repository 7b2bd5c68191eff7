// LoopWake (protocol/net/loop_wake.h): a wake from another thread runs the
// callback on the loop, several wakes before it runs share one callback,
// and no work queued before a wake is left unseen (the flag is cleared
// before the callback looks).
#include "protocol/net/loop_wake.h"

#include <concurrentqueue/concurrentqueue.h>
#include <gtest/gtest.h>
#include <uv.h>

#include <atomic>
#include <thread>

namespace oddsrelay::net {
namespace {

struct Looped {
  uv_loop_t loop;
  LoopWake wake;
  uv_timer_t limit;  // a lost wake shows as this timer's end
  moodycamel::ConcurrentQueue<int> items;
  std::atomic<int> seen{0}, want{0};
  int callbacks = 0;
  std::atomic<bool> timed_out{false};

  Looped() {
    uv_loop_init(&loop);
    EXPECT_TRUE(wake.init(
        &loop, [](void* self) { static_cast<Looped*>(self)->on_wake(); }, this));
    uv_timer_init(&loop, &limit);
    limit.data = this;
  }
  ~Looped() { uv_loop_close(&loop); }

  void on_wake() {
    ++callbacks;
    int v;
    while (items.try_dequeue(v)) ++seen;
    if (seen == want) stop();
  }
  void stop() {
    wake.close();
    uv_close(reinterpret_cast<uv_handle_t*>(&limit), nullptr);
  }
  // Runs the loop until `want` items were seen or 10 s passed.
  void run() {
    uv_timer_start(
        &limit,
        [](uv_timer_t* t) {
          auto* self = static_cast<Looped*>(t->data);
          self->timed_out = true;
          self->stop();
        },
        10'000, 0);
    uv_run(&loop, UV_RUN_DEFAULT);
  }
};

// Each item is the last one queued when it is sent (the producer waits
// until the loop has seen it): a wake lost at any step leaves the loop
// asleep with the item queued, until the 10 s limit.
TEST(LoopWake, EveryItemQueuedBeforeAWakeIsSeen) {
  Looped l;
  constexpr int kItems = 20'000;
  l.want = kItems;
  std::thread producer([&] {
    for (int i = 0; i < kItems && !l.timed_out; ++i) {
      l.items.enqueue(i);
      l.wake.send();
      while (l.seen.load() <= i && !l.timed_out) {
      }
    }
  });
  l.run();
  producer.join();
  EXPECT_FALSE(l.timed_out) << "a wake was lost: the loop slept with an item queued (seen " << l.seen.load() << ")";
  EXPECT_EQ(l.seen.load(), kItems);
  EXPECT_LE(l.callbacks, kItems);
}

TEST(LoopWake, WakesBeforeTheLoopRunsShareOneCallback) {
  Looped l;
  l.want = 50;
  for (int i = 0; i < 50; ++i) {
    l.items.enqueue(i);
    l.wake.send();
  }
  l.run();
  EXPECT_FALSE(l.timed_out);
  EXPECT_EQ(l.seen.load(), 50);
  EXPECT_EQ(l.callbacks, 1);
  l.wake.send();  // after close: the eventfd is still the wake's, nothing breaks
}

}  // namespace
}  // namespace oddsrelay::net
