// The resume window's rules: byte and age bounds evict the oldest batches
// first, bytes being the heap the window really keeps alive; a lookup resumes exactly when every change after the
// client's seq is held (boundary, inside a batch, too old, ahead, other epoch); a gap starts the window over; frames
// are shared, not copied; and the stream filter that decides what a catch-up sends.
#include "relay/resume_window.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <memory>

#include "relay/frame_encoder.h"
#include "relay/stream_filter.h"

namespace oddsrelay::relay {
namespace {

using V = ResumeWindow::Verdict;

// A batch of records from..seq with one odds frame of `payload` bytes.
LoopBatch batch(uint64_t from, uint64_t seq, size_t payload = 100, std::vector<LiveChange> live = {}) {
  LoopBatch b;
  b.from = from;
  b.seq = seq;
  b.at = static_cast<int64_t>(seq) * 10;
  b.marker = pt_marker(seq, from, b.at);
  b.frames.push_back(LoopBatchFrame{text_frame(std::string(payload, 'x')), seq, 1, true, {}});
  b.live = std::move(live);
  return b;
}

std::vector<uint64_t> froms(const ResumeWindow& w) {
  std::vector<uint64_t> v;
  for (size_t i = 0; i < w.size(); ++i) v.push_back(w[i].from);
  return v;
}

TEST(ResumeWindow, ByteBoundEvictsOldestFirst) {
  // Single-digit seqs: every batch below costs the same.
  ResumeWindow probe(SIZE_MAX, 60'000);
  probe.add(batch(1, 2, 1000), 0);
  const size_t one = probe.bytes();
  EXPECT_GT(one, 1000u);  // the frame's bytes count...
  EXPECT_LT(one, 1700u);  // ...plus the heap around them (frame objects, vectors, the deque's slot)

  ResumeWindow w(3 * one, 60'000);
  w.add(batch(1, 2, 1000), 0);
  w.add(batch(3, 4, 1000), 0);
  w.add(batch(5, 6, 1000), 0);
  EXPECT_EQ(froms(w), (std::vector<uint64_t>{1, 3, 5}));
  EXPECT_EQ(w.bytes(), 3 * one);
  w.add(batch(7, 8, 1000), 0);
  EXPECT_EQ(froms(w), (std::vector<uint64_t>{3, 5, 7}));
  EXPECT_EQ(w.bytes(), 3 * one);
  // One big batch pushes out as many old ones as it takes.
  w.add(batch(9, 9, 1900), 0);
  EXPECT_EQ(froms(w), (std::vector<uint64_t>{7, 9}));
  EXPECT_LE(w.bytes(), 3 * one);
  // A batch larger than the whole bound is not kept either.
  w.add(batch(10, 10, 4 * one), 0);
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(w.bytes(), 0u);
}

// A batch as a loop holds it: the hub's frames wrapped for this loop, with
// the markets and entries a filter needs and a live event with a long id.
LoopBatch held_batch(uint64_t seq, size_t payload) {
  LoopBatch b;
  b.from = b.seq = seq;
  b.marker = FrameRef::local(pt_marker(seq, seq, 10).share());
  for (uint32_t i = 0; i < 2; ++i)
    b.frames.push_back(LoopBatchFrame{FrameRef::local(text_frame(std::string(payload, 'x')).share()),
                                      seq,
                                      1,
                                      true,
                                      {1001, 1002, 1003},
                                      0,
                                      {Part{1001, 1, 2}, Part{1002, 3, 4}, Part{1003, 7, 2}}});
  b.live.push_back(LiveChange{seq, "s1.some-long-event-id-" + std::to_string(seq)});
  return b;
}

// Bytes in use on glibc's main arena; 0 where that is not the allocator
// the window's model describes (a sanitizer's, jemalloc's).
size_t glibc_in_use() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return 0;
#else
  if (heap_block(1) != 32) return 0;  // not glibc's chunks: jemalloc is linked
  return mallinfo2().uordblks;
#endif
}

TEST(ResumeWindow, ItsBytesAreTheHeapItKeepsAlive) {
  if (glibc_in_use() == 0) GTEST_SKIP() << "not on glibc malloc";
  auto w = std::make_unique<ResumeWindow>(SIZE_MAX, 60'000);
  for (uint64_t seq = 1; seq <= 2000; ++seq) {
    LoopBatch b = held_batch(seq, seq % 3 == 0 ? 700 : 20);
    // Some frames also went out to SSE streams: that framing stays cached.
    if (seq % 2 == 0) b.frames[0].frame.other(Framing::Sse, [](const FrameRef&) { return raw_bytes("data: x\n\n"); });
    w->add(std::move(b), 0);
  }
  // What it keeps alive is what letting it go gives back.
  const size_t counted = w->bytes(), in_use = glibc_in_use();
  w.reset();
  const size_t held = in_use - glibc_in_use();
  ASSERT_GT(held, 2000 * 700u / 3);
  // Everything it holds is counted (a left-out frame object, vector, string
  // or deque node makes the count fall short), and little more.
  EXPECT_GE(counted, held);
  EXPECT_LE(counted, held + held / 10);
}

TEST(ResumeWindow, ManyTinyBatchesEvictByTheirHeapNotTheirPayload) {
  // A frame or INFO of a few bytes still costs its objects: counted by
  // payload and struct sizes alone (as before), a 64 KiB window held more
  // than twice the batches it can afford.
  constexpr size_t kBound = 64 << 10;
  ResumeWindow w(kBound, 60'000);
  for (uint64_t seq = 1; seq <= 5000; ++seq) w.add(held_batch(seq, 1), 0);
  const LoopBatch& one = w[0];
  size_t payload = sizeof(LoopBatch) + one.marker->size();
  for (const LoopBatchFrame& f : one.frames)
    payload += sizeof(LoopBatchFrame) + f.frame->size() + 4 * f.markets.size() + sizeof(Part) * f.parts.size();
  for (const LiveChange& l : one.live) payload += sizeof(LiveChange) + l.key.size();
  ASSERT_GT(w.size(), 0u);
  EXPECT_LE(w.bytes(), kBound);
  EXPECT_LT(w.size() * payload, kBound / 2);
}

TEST(ResumeWindow, ReframedFramesAreCountedOnRecount) {
  ResumeWindow w(SIZE_MAX, 60'000);
  w.add(held_batch(1, 20), 0);
  w.add(held_batch(2, 20), 0);
  const size_t before = w.bytes();
  // A resumed SSE stream's catch-up frames the held frames anew.
  w[1].frames[0].frame.other(Framing::Sse, [](const FrameRef&) { return raw_bytes(std::string(500, 'd')); });
  EXPECT_EQ(w.bytes(), before);
  w.recount(1);
  EXPECT_GE(w.bytes(), before + 500);
  // Past the bound once recounted: the oldest goes.
  ResumeWindow small(2 * w.cost(w[0]) + 100, 60'000);
  small.add(held_batch(1, 20), 0);
  small.add(held_batch(2, 20), 0);
  ASSERT_EQ(small.size(), 2u);
  small[1].frames[0].frame.other(Framing::Sse, [](const FrameRef&) { return raw_bytes(std::string(500, 'd')); });
  small.recount(0);
  EXPECT_EQ(froms(small), (std::vector<uint64_t>{2}));
}

TEST(ResumeWindow, EveryLoopsOwnPartCountsTheHubsBytesOnce) {
  const LoopBatch b = held_batch(1, 2000);
  const size_t one = ResumeWindow(SIZE_MAX, 60'000, 1).cost(b), two = ResumeWindow(SIZE_MAX, 60'000, 2).cost(b);
  const size_t own = two - one;
  EXPECT_GT(own, 0u);
  EXPECT_GE(one - own, 2 * 2000u);  // the hub's bytes of the two frames, counted once in either
  EXPECT_EQ(ResumeWindow(SIZE_MAX, 60'000, 4).cost(b), one + 3 * own);
}

TEST(ResumeWindow, AgeBoundEvictsOldestFirst) {
  ResumeWindow w(SIZE_MAX, 1000);
  w.add(batch(1, 1), 0);
  w.add(batch(2, 2), 400);
  w.add(batch(3, 3), 800);
  w.evict(1000);  // exactly the bound: still kept
  EXPECT_EQ(froms(w), (std::vector<uint64_t>{1, 2, 3}));
  w.evict(1001);
  EXPECT_EQ(froms(w), (std::vector<uint64_t>{2, 3}));
  w.add(batch(4, 4), 1500);  // adding evicts by age too
  EXPECT_EQ(froms(w), (std::vector<uint64_t>{3, 4}));
  const size_t left = w.bytes();
  w.evict(1801);
  EXPECT_EQ(froms(w), (std::vector<uint64_t>{4}));
  EXPECT_LT(w.bytes(), left);
  w.evict(10'000);
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(w.bytes(), 0u);
}

TEST(ResumeWindow, LookupNeedsEveryChangeAfterTheClientsSeq) {
  ResumeWindow w(SIZE_MAX, 60'000);
  w.add(batch(5, 7), 0);
  w.add(batch(8, 10), 0);
  w.add(batch(11, 12), 0);
  auto find = [&](uint64_t seq, std::string_view epoch = "e1") { return w.find(epoch, seq, "e1", 12); };
  // The oldest batch starts at seq + 1: all of it.
  EXPECT_EQ(find(4).verdict, V::Resumed);
  EXPECT_EQ(find(4).first, 0u);
  // Exactly at a boundary: from the next batch on.
  EXPECT_EQ(find(7).verdict, V::Resumed);
  EXPECT_EQ(find(7).first, 1u);
  EXPECT_EQ(find(10).first, 2u);
  // Inside a batch: that whole batch again.
  EXPECT_EQ(find(5).first, 0u);
  EXPECT_EQ(find(6).first, 0u);
  EXPECT_EQ(find(9).first, 1u);
  EXPECT_EQ(find(11).first, 2u);
  // Up to date: resumed, nothing to send.
  EXPECT_EQ(find(12).verdict, V::Resumed);
  EXPECT_EQ(find(12).first, 3u);
  // Record 4 (and before) is no longer held.
  EXPECT_EQ(find(3).verdict, V::TooOld);
  EXPECT_EQ(find(0).verdict, V::TooOld);
  EXPECT_EQ(find(13).verdict, V::Ahead);
  EXPECT_EQ(find(4, "e2").verdict, V::OtherEpoch);
  EXPECT_EQ(find(12, "").verdict, V::OtherEpoch);
  EXPECT_EQ(w.find("e1", 5, "e1", 13).verdict, V::TooOld);  // the window does not reach the current seq
}

TEST(ResumeWindow, EmptyWindowResumesOnlyTheCurrentSeq) {
  ResumeWindow w(SIZE_MAX, 60'000);
  EXPECT_EQ(w.find("e", 0, "e", 0).verdict, V::Resumed);
  EXPECT_EQ(w.find("e", 0, "e", 0).first, 0u);
  EXPECT_EQ(w.find("e", 40, "e", 40).verdict, V::Resumed);  // e.b. right after a restart from a data dir
  EXPECT_EQ(w.find("e", 39, "e", 40).verdict, V::TooOld);
  EXPECT_EQ(w.find("e", 41, "e", 40).verdict, V::Ahead);
}

TEST(ResumeWindow, AGapStartsTheWindowOver) {
  ResumeWindow w(SIZE_MAX, 60'000);
  w.add(batch(1, 2), 0);
  w.add(batch(3, 4), 0);
  w.add(batch(9, 9), 0);  // records 5..8 never came through here
  EXPECT_EQ(froms(w), (std::vector<uint64_t>{9}));
  EXPECT_EQ(w.find("e", 4, "e", 9).verdict, V::TooOld);
  EXPECT_EQ(w.find("e", 8, "e", 9).verdict, V::Resumed);
}

TEST(ResumeWindow, ReasonsAreTheDocumentedStrings) {
  EXPECT_STREQ(ResumeWindow::reason(V::Malformed), "malformed");
  EXPECT_STREQ(ResumeWindow::reason(V::OtherEpoch), "other_epoch");
  EXPECT_STREQ(ResumeWindow::reason(V::TooOld), "too_old");
  EXPECT_STREQ(ResumeWindow::reason(V::Ahead), "ahead");
}

TEST(ResumeWindow, HoldsTheSharedFramesNotCopies) {
  ResumeWindow w(SIZE_MAX, 60'000);
  FrameRef f = text_frame("odds");
  const Frame* raw = f.get();
  LoopBatch b = batch(1, 1);
  b.frames.push_back(LoopBatchFrame{f, 7, 1, true, {}});
  w.add(std::move(b), 0);
  f.reset();  // fan-out is done with it: the window's reference keeps it alive
  ASSERT_EQ(w[0].frames.size(), 2u);
  EXPECT_EQ(w[0].frames[1].frame.get(), raw);
  EXPECT_EQ(w[0].frames[1].frame->bytes().substr(2), "odds");
}

TEST(ResumeWindow, LiveChangesSinceABatchLastKeyWins) {
  ResumeWindow w(SIZE_MAX, 60'000);
  w.add(batch(1, 1, 10, {{30, "s1.30"}, {20, "s1.20"}}), 0);
  w.add(batch(2, 2, 10, {{20, "s1.20-gone"}}), 0);
  w.add(batch(3, 3, 10, {{10, "s1.10"}}), 0);
  auto all = w.live_changes(0);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0], (std::pair<uint64_t, std::string_view>{10, "s1.10"}));
  EXPECT_EQ(all[1], (std::pair<uint64_t, std::string_view>{20, "s1.20-gone"}));
  EXPECT_EQ(all[2], (std::pair<uint64_t, std::string_view>{30, "s1.30"}));
  auto later = w.live_changes(2);
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].first, 10u);
  EXPECT_TRUE(w.live_changes(3).empty());
}

TEST(StreamFilter, SportsAndPermissions) {
  LoopBatchFrame evt1{text_frame("e"), 0, 1, false, {}}, odds1{text_frame("o"), 5, 1, true, {}},
      odds2{text_frame("o"), 6, 2, true, {}};
  const int32_t one[] = {1}, one_three[] = {1, 3};
  StreamFilter all{{}, true, true};
  EXPECT_TRUE(all.everything());
  EXPECT_TRUE(all.admits(evt1) && all.admits(odds1) && all.admits(odds2));
  StreamFilter sport1{one, true, true};
  EXPECT_FALSE(sport1.everything());
  EXPECT_TRUE(sport1.admits(evt1));
  EXPECT_TRUE(sport1.admits(odds1));
  EXPECT_FALSE(sport1.admits(odds2));
  StreamFilter live_only{{}, true, false};
  EXPECT_FALSE(live_only.everything());
  EXPECT_TRUE(live_only.admits(evt1));
  EXPECT_FALSE(live_only.admits(odds1));
  StreamFilter odds_13{one_three, false, true};
  EXPECT_FALSE(odds_13.admits(evt1));
  EXPECT_TRUE(odds_13.admits(odds1));
  EXPECT_FALSE(odds_13.admits(odds2));
  EXPECT_TRUE(odds_13.wants_sport(3));
  EXPECT_FALSE(odds_13.wants_sport(2));
}

}  // namespace
}  // namespace oddsrelay::relay
