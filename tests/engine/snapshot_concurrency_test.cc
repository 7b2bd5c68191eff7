// Readers on other threads hold and walk snapshots while the single writer
// applies a long feed. Every snapshot a reader sees must be one whole batch:
// never a mix of two. Run under ASan and TSan builds too (.ci/run).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "engine/core/engine.h"
#include "engine/sources/simulator.h"
#include "tests/test_util.h"

namespace oddsrelay {

TEST(SnapshotConcurrency, ReadersOnlyEverSeeWholeBatches) {
  constexpr int kEvents = 64, kBatches = test::kSanitized ? 1000 : 3000, kReaders = 3;
  Engine e;
  std::atomic<bool> done{false};
  std::atomic<uint64_t> checks{0};
  std::vector<std::thread> readers;
  std::atomic<int> failures{0};
  for (int r = 0; r < kReaders; ++r) {
    readers.emplace_back([&] {
      uint64_t last_seq = 0;
      while (!done.load(std::memory_order_acquire)) {
        SnapshotPtr s = e.current();
        if (s->seq < last_seq) failures++;
        last_seq = s->seq;
        if (s->seq == 0) continue;
        // Each batch writes its number as the price of every event's market:
        // all must agree, and match the snapshot's batch (seq counts
        // records: kEvents a batch).
        int32_t price = -1;
        size_t n = 0;
        s->events.for_each([&](const EventEntry& ev) {
          const Market* m = ev.market(1001);
          if (!m) {
            failures++;
            return;
          }
          if (price < 0) price = m->outcomes[0].price;
          if (m->outcomes[0].price != price) failures++;
          ++n;
        });
        if (n != static_cast<size_t>(kEvents) || s->seq % kEvents != 0 ||
            static_cast<uint64_t>(price) != 100 + s->seq / kEvents)
          failures++;
        checks++;
      }
    });
  }
  for (int b = 1; b <= kBatches; ++b) {
    for (int i = 1; i <= kEvents; ++i)
      e.apply(test::market(b, std::to_string(i), 1001, {{"s", 0, {{2001, 100 + b, 0}}}}));
    e.commit();
  }
  done = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(checks.load(), 0u);
  EXPECT_EQ(e.current()->seq, static_cast<uint64_t>(kBatches) * kEvents);
}

// The same with the simulator's feed: the counters a snapshot carries must
// agree with its contents.
TEST(SnapshotConcurrency, SnapshotCountersMatchContentsUnderLoad) {
  Engine e;
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::atomic<uint64_t> checks{0};
  std::thread reader([&] {
    while (!done.load(std::memory_order_acquire)) {
      SnapshotPtr s = e.current();
      uint64_t live = 0, pre = 0, markets = 0, outcomes = 0;
      s->events.for_each([&](const EventEntry& ev) {
        if (ev.listed()) (ev.live() ? live : pre)++;
        markets += ev.markets.size();
        for (const auto& m : ev.markets) outcomes += m->outcomes.size();
      });
      uint64_t per_sport = 0;
      for (const auto& c : s->sports) per_sport += c.live + c.prematch;
      if (live != s->listed_live || pre != s->listed_prematch || markets != s->markets || outcomes != s->outcomes ||
          per_sport != live + pre)
        failures++;
      checks++;
    }
  });
  sim::Simulator sim(sim::SimOptions{5, 200, 2000, 200});
  std::vector<feed::Record> out;
  sim.open(0, 0, out);
  size_t applied = 0;
  while (applied < 60000) {
    for (auto& r : out) {
      e.apply(std::move(r));
      if (++applied % 256 == 0) e.commit();
    }
    out.clear();
    sim.step(sim.now(), out);
  }
  e.commit();
  done = true;
  reader.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(checks.load(), 0u);
}

}  // namespace oddsrelay

namespace oddsrelay {

TEST(SnapshotStore, RetiredBoxesAreFreedOnceReadersLeave) {
  SnapshotStore store;
  for (int i = 0; i < 1000; ++i) {
    auto s = std::make_shared<Snapshot>();
    s->seq = static_cast<uint64_t>(i + 1);
    store.publish(std::move(s));
    EXPECT_LE(store.retired(), 2u);  // no reader: at most one phase behind
  }
  EXPECT_EQ(store.load()->seq, 1000u);
}

TEST(SnapshotStore, AHeldSnapshotOutlivesLaterPublishes) {
  SnapshotStore store;
  auto first = std::make_shared<Snapshot>();
  first->seq = 1;
  store.publish(first);
  SnapshotPtr held = store.load();
  first.reset();
  for (int i = 2; i < 100; ++i) {
    auto s = std::make_shared<Snapshot>();
    s->seq = static_cast<uint64_t>(i);
    store.publish(std::move(s));
  }
  EXPECT_EQ(held->seq, 1u);
  EXPECT_EQ(store.load()->seq, 99u);
}

}  // namespace oddsrelay
