// The queues that hand work from one stage's thread to the next (the feed's
// records to the engine, sealed batches to the delivery thread, published
// batches to the sinks: history, webhooks, capture, bus): moodycamel's
// blocking queue, spinning briefly before it sleeps. Its default spins
// 10,000 times on an empty queue first, about 20 us of a core per wait on
// this VM; with a batch a millisecond (the simulator's 1,000 records/s)
// each waiting stage spins once a batch, and on one core (the relay
// benchmarks pin the server to one) a spinning consumer only delays the
// producer it waits for. perf/PROFILE.md "After (s25)" has the figures.
#pragma once

#include <concurrentqueue/blockingconcurrentqueue.h>

namespace oddsrelay {

struct HandOffTraits : moodycamel::ConcurrentQueueDefaultTraits {
  static const int MAX_SEMA_SPINS = 100;
};

template <class T>
using HandOffQueue = moodycamel::BlockingConcurrentQueue<T, HandOffTraits>;

}  // namespace oddsrelay
