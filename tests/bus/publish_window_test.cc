// The ingest's publish window (engine/bus/publish_window.h): after a sync
// the first message goes alone, so a message the new stream leader
// inherited cannot leave a hole in the log; and a message stored after a
// refused one is reported as the hole it makes.
#include "engine/bus/publish_window.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <vector>

namespace oddsrelay::bus {
namespace {

TEST(PublishWindow, AfterASyncTheFirstMessageGoesAlone) {
  PublishWindow w(4);
  w.after_sync();
  ASSERT_TRUE(w.may_send());
  w.sent();
  EXPECT_FALSE(w.may_send());
  EXPECT_FALSE(w.acked(true, false));
  EXPECT_FALSE(w.probing());
  int sent = 0;
  while (w.may_send()) w.sent(), ++sent;
  EXPECT_EQ(sent, 4);
  EXPECT_EQ(w.inflight(), 4u);
}

TEST(PublishWindow, AStoredMessageAfterARefusedOneIsAHole) {
  PublishWindow w(4);
  w.after_sync();
  w.sent();
  w.acked(true, false);
  for (int i = 0; i < 3; ++i) w.sent();
  EXPECT_FALSE(w.acked(false, true));  // "wrong last sequence"
  EXPECT_TRUE(w.acked(true, false));
  EXPECT_EQ(w.inflight(), 1u);
  // A new round forgets the refusal.
  w.acked(false, false);
  w.after_sync();
  w.sent();
  EXPECT_FALSE(w.acked(true, false));
}

TEST(PublishWindow, AStoredMessageAfterATimeoutIsNoHole) {
  PublishWindow w(4);
  w.after_sync();
  w.sent();
  w.acked(true, false);
  w.sent();
  w.sent();
  EXPECT_FALSE(w.acked(false, false));  // its ack timed out: it may well be stored
  EXPECT_FALSE(w.acked(true, false));
}

// A stream with JetStream's Nats-Expected-Last-Sequence check, applying
// its leader's log in order. Positions are the log's: a message holds
// first..last.
struct Stream {
  struct Msg {
    uint64_t expected = 0, first = 0, last = 0;
    bool ours = true;  // sent since the publisher's sync: its ack reaches it
  };
  std::vector<Msg> stored;  // stream seq i + 1
  std::deque<Msg> log;      // the leader's log, not yet applied
  // Applies the log's front: true when stored.
  bool apply_one() {
    Msg m = log.front();
    log.pop_front();
    if (m.expected != stored.size()) return false;
    stored.push_back(m);
    return true;
  }
};

// The failover of the CI run that showed it: one message from before the
// sync (its ack lost with the old leader) is in the new leader's log ahead
// of everything the publisher sends after reading where the stream stands.
// The publisher goes on until the buffer is stored; the stream must hold
// every position once, in order.
TEST(PublishWindow, AMessageTheNewLeaderInheritedLeavesNoHole) {
  Stream s;
  s.stored = {{0, 1, 10}, {1, 11, 20}};
  s.log.push_back({2, 21, 21, false});  // the stale one: its ack went with the old leader
  uint64_t pos = 60;                    // the publisher holds 21..60, in messages of ten
  PublishWindow w(8);
  for (int round = 0; round < 10 && s.stored.back().last < pos; ++round) {
    // Sync: the stream's end as the leader reports it (the stale message
    // is not applied yet), and the buffer lined up behind it.
    uint64_t expected = s.stored.size();
    uint64_t next = s.stored.back().last + 1;
    w.after_sync();
    bool refused_any = false;
    while (next <= pos || w.inflight() > 0) {
      while (next <= pos && w.may_send() && !refused_any) {
        const uint64_t last = std::min(pos, next + 9);
        s.log.push_back({expected++, next, last});
        next = last + 1;
        w.sent();
      }
      if (s.log.empty()) break;
      const bool ours = s.log.front().ours;
      const bool ok = s.apply_one();
      if (ours) {
        w.acked(ok, !ok);
        refused_any = refused_any || !ok;
      }
      if (refused_any && w.inflight() == 0) break;
    }
    s.log.clear();
  }
  EXPECT_EQ(s.stored.back().last, pos);
  for (size_t i = 1; i < s.stored.size(); ++i)
    EXPECT_EQ(s.stored[i].first, s.stored[i - 1].last + 1) << "a hole before stream seq " << i + 1;
}

}  // namespace
}  // namespace oddsrelay::bus
