// Snapshot files: loading one gives exactly the state that was written
// (digest, dump, counters, position, epoch), the same state always gives
// the same bytes, and a torn or altered file is refused as a whole.
#include "engine/storage/snapshot_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "engine/core/state_digest.h"
#include "engine/sources/simulator.h"
#include "tests/test_util.h"

namespace oddsrelay {
namespace {

// A state with every kind of part: live and pre-match events, removed ones
// that keep their score, finals and corrections (the simulator ends and
// replaces fixtures), stats.
void build(Engine& e, size_t n) {
  sim::Simulator sim(sim::SimOptions{21, 40, 2000, 20});
  std::vector<feed::Record> out;
  sim.open(1'000'000, 1'000'000, out);
  while (out.size() < n) sim.step(sim.now(), out);
  out.resize(n);
  e.set_epoch("e-test");
  size_t i = 0;
  for (auto& r : out) {
    e.apply(std::move(r));
    if (++i % 100 == 0) e.commit();
  }
  e.commit();
}

TEST(SnapshotFile, LoadGivesTheSameState) {
  test::TempDir dir;
  Engine a;
  build(a, 30000);
  SnapshotPtr s = a.current();
  ASSERT_EQ(s->seq, a.applied());
  size_t ended = 0, removed_with_score = 0;
  s->events.for_each([&](const EventEntry& e) {
    if (e.score && e.score->ended) ++ended;
    if (!e.info && e.score) ++removed_with_score;
  });
  ASSERT_GT(ended, 0u) << "the state should hold settlement anchors";
  ASSERT_GT(removed_with_score, 0u) << "the state should hold removed events with a score";

  SnapshotInfo info;
  std::string err;
  ASSERT_TRUE(write_snapshot_file(*s, dir.file("snap.jsonl"), info, err)) << err;
  EXPECT_EQ(info.seq, s->seq);
  EXPECT_EQ(info.events, s->events.size());
  EXPECT_NE(access(dir.file("snap.jsonl.tmp").c_str(), F_OK), 0) << "no temporary file left";

  Engine b;
  SnapshotInfo loaded;
  ASSERT_TRUE(load_snapshot_file(dir.file("snap.jsonl"), b, loaded, err)) << err;
  SnapshotPtr t = b.current();
  EXPECT_EQ(t->seq, s->seq);
  EXPECT_EQ(t->epoch, "e-test");
  EXPECT_EQ(t->clock, s->clock);
  EXPECT_EQ(t->listed_live, s->listed_live);
  EXPECT_EQ(t->listed_prematch, s->listed_prematch);
  EXPECT_EQ(t->markets, s->markets);
  EXPECT_EQ(t->outcomes, s->outcomes);
  ASSERT_EQ(t->sports.size(), s->sports.size());
  for (size_t i = 0; i < s->sports.size(); ++i) {
    EXPECT_EQ(t->sports[i].sport, s->sports[i].sport);
    EXPECT_EQ(t->sports[i].live, s->sports[i].live);
  }
  EXPECT_EQ(dump_state(*t), dump_state(*s));
  EXPECT_EQ(state_digest(*t), state_digest(*s));
  // Kept as the engine keeps it: an ended event's withdrawn lines packed,
  // so the state's bytes are the same too.
  EXPECT_EQ(t->bytes, s->bytes);
  size_t packed = 0;
  t->events.for_each([&](const EventEntry& e) {
    if (!e.history || !e.score || !e.score->ended) return;
    EXPECT_TRUE(e.history->markets.empty()) << e.key;
    packed += !e.history->packed.empty();
  });
  EXPECT_GT(packed, 0u) << "the state should hold ended events with withdrawn lines";
  // The client-visible digest's sums (engine/core/odds_digest.h) are not in
  // the file: the load makes them again, equal to the engine's.
  size_t with_odds = 0;
  t->events.for_each([&](const EventEntry& e) {
    const EventEntry* o = s->events.find(e.number);
    ASSERT_TRUE(o);
    EXPECT_EQ(e.odds_digest, o->odds_digest) << e.key;
    for (const MarketRef& m : e.markets) EXPECT_EQ(m->digest, o->market(m.id)->digest) << e.key;
    with_odds += e.odds_digest != 0;
  });
  EXPECT_GT(with_odds, 0u);

  // The loaded engine goes on like the original: the same next records give
  // the same state and positions.
  Engine c;
  build(c, 30500);
  sim::Simulator sim(sim::SimOptions{21, 40, 2000, 20});
  std::vector<feed::Record> out;
  sim.open(1'000'000, 1'000'000, out);
  while (out.size() < 30500) sim.step(sim.now(), out);
  for (size_t i = 30000; i < 30500; ++i) b.apply(std::move(out[i]));
  b.commit();
  EXPECT_EQ(b.current()->seq, 30500u);
  EXPECT_EQ(state_digest(*b.current()), state_digest(*c.current()));
}

TEST(SnapshotFile, SameStateSameBytes) {
  test::TempDir dir;
  Engine a, b;
  build(a, 5000);
  build(b, 5000);
  SnapshotInfo i1, i2;
  std::string err;
  ASSERT_TRUE(write_snapshot_file(*a.current(), dir.file("a"), i1, err)) << err;
  ASSERT_TRUE(write_snapshot_file(*b.current(), dir.file("b"), i2, err)) << err;
  EXPECT_EQ(test::read_file(dir.file("a")), test::read_file(dir.file("b")));
}

TEST(SnapshotFile, TornOrAlteredFilesAreRefused) {
  test::TempDir dir;
  Engine a;
  build(a, 5000);
  SnapshotInfo info;
  std::string err;
  ASSERT_TRUE(write_snapshot_file(*a.current(), dir.file("s"), info, err)) << err;
  const std::string good = test::read_file(dir.file("s"));
  ASSERT_TRUE(check_snapshot_file(dir.file("s"), info, err)) << err;

  test::write_file(dir.file("torn"), good.substr(0, good.size() / 2));
  EXPECT_FALSE(check_snapshot_file(dir.file("torn"), info, err));
  EXPECT_NE(err.find("torn"), std::string::npos) << err;

  std::string no_end = good.substr(0, good.rfind('\n', good.size() - 2) + 1);
  test::write_file(dir.file("noend"), no_end);
  EXPECT_FALSE(check_snapshot_file(dir.file("noend"), info, err));
  EXPECT_NE(err.find("no end line"), std::string::npos) << err;

  std::string flipped = good;
  size_t p = flipped.find("\"op\":\"state\"", flipped.size() / 2);
  ASSERT_NE(p, std::string::npos);
  flipped[p + 6] = 'S';
  test::write_file(dir.file("flipped"), flipped);
  EXPECT_FALSE(check_snapshot_file(dir.file("flipped"), info, err));
  EXPECT_NE(err.find("checksum"), std::string::npos) << err;

  test::write_file(dir.file("plainfeed"), "{\"op\":\"header\",\"format\":\"oddsfeed\",\"version\":1}\n");
  EXPECT_FALSE(check_snapshot_file(dir.file("plainfeed"), info, err));
}

// The bus carries the same bytes as the file (engine/bus/snapshot_transfer.h):
// encoded in memory and loaded from memory, they give the same state, and a
// cut or altered copy is refused.
TEST(SnapshotFile, InMemoryBytesAreTheFileAndLoadTheSameState) {
  test::TempDir dir;
  Engine a;
  build(a, 20000);
  SnapshotPtr s = a.current();
  std::string data;
  const uint64_t events = encode_snapshot(*s, [&](std::string& piece) {
    data += piece;
    piece.clear();
  });
  EXPECT_EQ(events, s->events.size());
  SnapshotInfo info;
  std::string err;
  ASSERT_TRUE(write_snapshot_file(*s, dir.file("snap.jsonl"), info, err)) << err;
  EXPECT_EQ(test::read_file(dir.file("snap.jsonl")), data);

  Engine b;
  SnapshotInfo loaded;
  ASSERT_TRUE(load_snapshot_data(data, "bus", b, loaded, err)) << err;
  EXPECT_EQ(b.current()->seq, s->seq);
  EXPECT_EQ(b.current()->epoch, "e-test");
  EXPECT_EQ(state_digest(*b.current()), state_digest(*s));

  Engine c;
  EXPECT_FALSE(load_snapshot_data(std::string_view(data).substr(0, data.size() / 2), "cut", c, loaded, err));
  EXPECT_NE(err.find("cut"), std::string::npos) << err;
  std::string altered = data;
  altered[altered.size() / 2] ^= 1;
  Engine d;
  EXPECT_FALSE(load_snapshot_data(altered, "altered", d, loaded, err));
  Engine e;
  EXPECT_FALSE(load_snapshot_data("", "empty", e, loaded, err));
}

// Retention after a load: the file carries the feed clock and the evicted
// count, the loader rebuilds the index of events that may leave, so the
// loaded engine evicts at exactly the records the original does.
std::vector<feed::Record> fast_feed(size_t n) {
  sim::SimOptions o;
  o.seed = 4;
  o.events = 30;
  o.rate = 300;
  o.minute_ms = 20;
  o.tick_ms = 100;
  o.correct_permille = 300;
  sim::Simulator sim(o);
  std::vector<feed::Record> out;
  sim.open(1'000'000, 1'000'000, out);
  while (out.size() < n) sim.step(sim.now(), out);
  out.resize(n);
  return out;
}

TEST(SnapshotFile, LoadKeepsEvictingAtTheSameRecords) {
  constexpr int64_t kHorizon = 3000;
  constexpr size_t kHalf = 10000, kBatch = 100;
  std::vector<feed::Record> feed = fast_feed(2 * kHalf);
  test::TempDir dir;
  Engine a;
  a.set_retain_ended_ms(kHorizon);
  a.set_epoch("e-ret");
  for (size_t i = 0; i < kHalf; ++i) {
    a.apply(feed::Record(feed[i]));
    if ((i + 1) % kBatch == 0) a.commit();
  }
  SnapshotPtr mid = a.current();
  ASSERT_GT(mid->evicted, 0u);
  SnapshotInfo info;
  std::string err;
  ASSERT_TRUE(write_snapshot_file(*mid, dir.file("snap"), info, err)) << err;

  Engine b;
  b.set_retain_ended_ms(kHorizon);
  ASSERT_TRUE(load_snapshot_file(dir.file("snap"), b, info, err)) << err;
  EXPECT_EQ(info.retain_ended_ms, kHorizon);
  EXPECT_EQ(info.evicted, mid->evicted);
  SnapshotPtr loaded = b.current();
  EXPECT_EQ(loaded->feed_clock, mid->feed_clock);
  EXPECT_EQ(loaded->evicted, mid->evicted);
  EXPECT_EQ(loaded->ended, mid->ended);
  EXPECT_EQ(loaded->ended_live, mid->ended_live);
  EXPECT_EQ(loaded->bytes, mid->bytes);
  EXPECT_EQ(state_digest(*loaded), state_digest(*mid));

  size_t compared = 0;
  for (size_t i = kHalf; i < feed.size(); ++i) {
    a.apply(feed::Record(feed[i]));
    b.apply(feed::Record(feed[i]));
    if ((i + 1) % kBatch) continue;
    a.commit();
    b.commit();
    ASSERT_EQ(state_digest(*b.current()), state_digest(*a.current())) << "seq " << a.current()->seq;
    ++compared;
  }
  EXPECT_EQ(compared, kHalf / kBatch);
  // Events that were in the file left after the load, as in the original.
  size_t gone_from_file = 0;
  mid->events.for_each([&](const EventEntry& e) { gone_from_file += b.current()->events.find(e.number) == nullptr; });
  EXPECT_GT(gone_from_file, 10u);
  EXPECT_EQ(b.current()->evicted, a.current()->evicted);
  EXPECT_EQ(b.current()->bytes, a.current()->bytes);
}

// The feed clock is a max the file keeps even when the last record went
// back in time: an ended record older than the horizon then leaves at once,
// after a load as before it.
TEST(SnapshotFile, FeedClockSurvivesARecordBackInTime) {
  constexpr int64_t kHorizon = 10'000;
  test::TempDir dir;
  auto records = [] {
    std::vector<feed::Record> r;
    r.push_back(test::rec(R"({"at":1000,"op":"score","id":"1","home":1,"away":0,"status":"ended"})"));
    r.push_back(test::event(10'999, "9", 1, false));
    r.push_back(test::event(50, "9", 1, false));  // back in time: clock 50, feed clock 10999
    return r;
  };
  Engine a;
  a.set_retain_ended_ms(kHorizon);
  test::apply_all(a, records());
  ASSERT_EQ(a.current()->clock, 50);
  ASSERT_EQ(a.current()->feed_clock, 10'999);
  SnapshotInfo info;
  std::string err;
  ASSERT_TRUE(write_snapshot_file(*a.current(), dir.file("snap"), info, err)) << err;
  Engine b;
  b.set_retain_ended_ms(kHorizon);
  ASSERT_TRUE(load_snapshot_file(dir.file("snap"), b, info, err)) << err;
  EXPECT_EQ(b.current()->feed_clock, 10'999);
  for (Engine* e : {&a, &b}) {
    test::apply_all(*e, {test::rec(R"({"at":60,"op":"score","id":"2","home":0,"away":0,"status":"ended"})")});
    EXPECT_EQ(e->current()->events.find(2), nullptr) << (e == &a ? "original" : "loaded");
    EXPECT_NE(e->current()->events.find(1), nullptr);  // 1000 + 10000 > 10999
    test::apply_all(*e, {test::event(11'000, "9", 1, false)});
    EXPECT_EQ(e->current()->events.find(1), nullptr) << (e == &a ? "original" : "loaded");
  }
  EXPECT_EQ(state_digest(*b.current()), state_digest(*a.current()));
}

// A snapshot written with the previous file's layout copies the lines of
// the events that did not change since, and is byte for byte the file a
// full encoding gives; a line that fails its checksum in the previous file
// is encoded again rather than copied.
TEST(SnapshotFile, CopyingUnchangedLinesWritesTheSameBytes) {
  test::TempDir dir;
  sim::Simulator sim(sim::SimOptions{21, 40, 2000, 20});
  std::vector<feed::Record> recs;
  sim.open(1'000'000, 1'000'000, recs);
  while (recs.size() < 24000) sim.step(sim.now(), recs);
  recs.resize(24000);
  Engine e;
  e.set_epoch("e-test");
  auto apply = [&](size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) {
      e.apply(feed::Record(recs[i]));
      if (i % 100 == 99) e.commit();
    }
    e.commit();
  };
  apply(0, 20000);
  SnapshotLayout layout;
  SnapshotInfo i1, i2, full;
  std::string err;
  ASSERT_TRUE(write_snapshot_file(*e.current(), dir.file("s1"), i1, err, &layout)) << err;
  EXPECT_EQ(i1.copied, 0u) << "nothing to copy from yet";
  EXPECT_EQ(layout.path, dir.file("s1"));
  ASSERT_EQ(layout.lines.size(), i1.events);

  apply(20000, 24000);
  const SnapshotPtr s2 = e.current();
  size_t changed = 0;
  s2->events.for_each([&](const EventEntry& x) {
    auto it = std::lower_bound(layout.lines.begin(), layout.lines.end(), x.number,
                               [](const SnapshotLayout::Line& l, uint64_t n) { return l.number < n; });
    if (it == layout.lines.end() || it->number != x.number || it->edit != x.edit) ++changed;
  });
  ASSERT_GT(changed, 0u) << "the later records should change some events";
  ASSERT_LT(changed, s2->events.size()) << "and leave others as they were";
  const SnapshotLayout before = layout;
  ASSERT_TRUE(write_snapshot_file(*s2, dir.file("s2"), i2, err, &layout)) << err;
  EXPECT_EQ(i2.copied, s2->events.size() - changed);
  ASSERT_TRUE(write_snapshot_file(*s2, dir.file("full"), full, err)) << err;
  EXPECT_EQ(full.copied, 0u);
  const std::string want = test::read_file(dir.file("full"));
  EXPECT_EQ(test::read_file(dir.file("s2")), want) << test::first_diff(test::read_file(dir.file("s2")), want);
  EXPECT_EQ(layout.path, dir.file("s2"));

  // A bit flipped inside an unchanged event's line of the previous file:
  // that line is encoded from the state instead, the rest still copied.
  const SnapshotLayout::Line* victim = nullptr;
  for (const auto& l : before.lines) {
    const EventEntry* x = s2->events.find(l.number);
    if (x && x->edit == l.edit && x->updated_at == l.updated_at) {
      victim = &l;
      break;
    }
  }
  ASSERT_NE(victim, nullptr);
  std::string old = test::read_file(dir.file("s1"));
  old[victim->offset + victim->length / 2] ^= 0x01;
  test::write_file(dir.file("s1"), old);
  layout = before;
  SnapshotInfo i3;
  ASSERT_TRUE(write_snapshot_file(*s2, dir.file("s3"), i3, err, &layout)) << err;
  EXPECT_EQ(i3.copied, i2.copied - 1);
  EXPECT_EQ(test::read_file(dir.file("s3")), want);

  // The previous file gone: everything is encoded.
  layout = before;
  ASSERT_EQ(unlink(dir.file("s1").c_str()), 0);
  SnapshotInfo i4;
  ASSERT_TRUE(write_snapshot_file(*s2, dir.file("s4"), i4, err, &layout)) << err;
  EXPECT_EQ(i4.copied, 0u);
  EXPECT_EQ(test::read_file(dir.file("s4")), want);
}

// The engine keeps an entry's `ended` beside its score (the record path
// reads it there): a loaded entry must have it too, or a market record after
// full time would add to a history that froze at the first `ended`.
TEST(SnapshotFile, AnEndedEventsLineHistoryStaysFrozenAfterALoad) {
  const std::string id = "s7-1.42";
  auto ended = test::rec(R"({"at":30,"op":"score","id":")" + id + R"(","home":2,"away":1,"status":"ended"})");
  Engine a;
  a.set_epoch("e-test");
  test::apply_all(a, {test::event(1, id, 1, true),
                      test::market(10, id, 1007, {{"s1.5", 0, {{2101, 130, 0}}}, {"s2.5", 0, {{2101, 190, 0}}}}),
                      test::market(20, id, 1007, {{"s2.5", 0, {{2101, 185, 0}}}}), std::move(ended)});
  const LineHistoryPtr frozen = a.current()->events.find(42)->history;
  ASSERT_NE(frozen, nullptr);

  test::TempDir dir;
  SnapshotInfo info;
  std::string err;
  ASSERT_TRUE(write_snapshot_file(*a.current(), dir.file("snap.jsonl"), info, err)) << err;
  Engine b;
  ASSERT_TRUE(load_snapshot_file(dir.file("snap.jsonl"), b, info, err)) << err;
  const LineHistoryPtr loaded = b.current()->events.find(42)->history;

  // After full time the book withdraws the rest: none of it is a read before full time.
  for (Engine* e : {&a, &b}) test::apply_all(*e, {test::market(40, id, 1007, {{"s3.5", 0, {{2101, 100, 0}}}})});
  EXPECT_EQ(a.current()->events.find(42)->history, frozen);
  EXPECT_EQ(b.current()->events.find(42)->history, loaded) << "a loaded ended event's history changed";
  EXPECT_EQ(state_digest(*b.current()), state_digest(*a.current()));
}

}  // namespace
}  // namespace oddsrelay
