#include "engine/core/event_map.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace oddsrelay {

namespace {
void put(EventMap& m, uint64_t n, uint64_t edit, int64_t tag) {
  auto& slot = m.slot(n, edit);
  slot = std::make_shared<EventEntry>();
  slot->number = n;
  slot->updated_at = tag;
}
}  // namespace

TEST(EventMap, BehavesLikeAMapUnderRandomOps) {
  EventMap m;
  std::map<uint64_t, int64_t> ref;
  std::mt19937_64 rng(7);
  uint64_t edit = 1;
  for (int i = 0; i < 50000; ++i) {
    if (i % 100 == 0) ++edit;
    uint64_t n = rng() % 5000 + 1;
    if (rng() % 4 == 0) {
      m.erase(n, edit);
      ref.erase(n);
    } else {
      put(m, n, edit, i);
      ref[n] = i;
    }
  }
  EXPECT_EQ(m.size(), ref.size());
  for (auto [n, tag] : ref) {
    const EventEntry* e = m.find(n);
    ASSERT_NE(e, nullptr) << n;
    EXPECT_EQ(e->updated_at, tag);
  }
  size_t visited = 0;
  m.for_each([&](const EventEntry& e) {
    ++visited;
    EXPECT_EQ(ref.at(e.number), e.updated_at);
  });
  EXPECT_EQ(visited, ref.size());
}

TEST(EventMap, OldVersionUntouchedByLaterEdits) {
  EventMap m;
  for (uint64_t n = 1; n <= 1000; ++n) put(m, n, 1, 1);
  EventMap v1 = m;  // what a snapshot holds
  for (uint64_t n = 1; n <= 1000; n += 2) put(m, n, 2, 2);
  m.erase(2, 2);
  EXPECT_EQ(v1.size(), 1000u);
  EXPECT_EQ(m.size(), 999u);
  for (uint64_t n = 1; n <= 1000; ++n) {
    ASSERT_NE(v1.find(n), nullptr);
    EXPECT_EQ(v1.find(n)->updated_at, 1);
  }
  EXPECT_EQ(m.find(1)->updated_at, 2);
  EXPECT_EQ(m.find(2), nullptr);
}

TEST(EventMap, EditsWithinABatchDoNotCopyAgain) {
  EventMap m;
  put(m, 1, 5, 1);
  const EventEntry* first = m.find(1);
  auto& slot = m.slot(1, 5);  // same batch: same nodes
  EXPECT_EQ(slot.get(), first);
}

}  // namespace oddsrelay
