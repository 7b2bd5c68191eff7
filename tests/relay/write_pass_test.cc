// A loop turn's writes (relay/write_pass.h) over the fan-out fixture's
// streams, a write being what the socket would take: batches taken while
// the loop writes ride along with the connections not yet written; one
// already written gets them in a second write at the end of the same pass
// (not held for a later turn); no frame is lost or reordered; the intake
// looks only during the first pass, so no connection is written more than
// twice in a turn; without intake everything marked is written at once.
#include "relay/write_pass.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "tests/relay/fanout_fixture.h"

namespace oddsrelay::relay {
namespace {

struct WritePass : Fanout {
  struct Write {
    StreamConn* c;
    std::vector<std::string> frames;
  };
  std::vector<Write> writes;
  std::vector<StreamConn*> closed;
  void pass(std::function<void()> intake, size_t every = 1) {
    auto close = [&](StreamConn* c) { closed.push_back(c); };
    auto write = [&](StreamConn* c) {
      writes.push_back({c, take(*c)});
      c->q.written();
    };
    write_pass(ctx->out, &intake, every, close, write);
  }
  // What a stream of every permission is sent of a batch.
  std::vector<std::string> of(const LoopBatch& b) {
    std::vector<std::string> v;
    for (const LoopBatchFrame& f : b.frames)
      if (conns.front()->filter().admits(f)) v.push_back(payload(f.frame->bytes()));
    v.push_back(payload(b.marker->bytes()));
    return v;
  }
  static std::vector<std::string> cat(std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }
};

TEST_F(WritePass, ABatchTakenMidPassRidesAlongOrGoesOutAtTheEndOfThePass) {
  StreamConn* a = stream(kAll);
  StreamConn* b = stream(kAll);
  StreamConn* c = stream(kAll);
  const LoopBatch one = fan_out({test::event(1000, "7", 1, true), odds(1000, "7", 1001, 185)});
  LoopBatch two;
  bool taken = false;
  // After the first write a batch arrives: a is written, b and c are not.
  pass([&] {
    if (taken) return;
    two = fan_out({odds(1100, "7", 1002, 190)});
    taken = true;
  });
  ASSERT_EQ(writes.size(), 4u);
  EXPECT_EQ(writes[0].c, a);
  EXPECT_EQ(writes[0].frames, of(one));
  EXPECT_EQ(writes[1].c, b);
  EXPECT_EQ(writes[1].frames, cat(of(one), of(two)));  // the second batch in the same write
  EXPECT_EQ(writes[2].c, c);
  EXPECT_EQ(writes[2].frames, cat(of(one), of(two)));
  EXPECT_EQ(writes[3].c, a);  // in the same turn, not held for the next
  EXPECT_EQ(writes[3].frames, of(two));
  EXPECT_TRUE(ctx->out.dirty.empty());
  EXPECT_FALSE(a->dirty);
}

// A batch at every look: the connections written again at the end of the
// pass take no more (the turn ends; reads wait at most one pass), and each
// connection's writes still hold every batch once, in order.
TEST_F(WritePass, TheIntakeLooksOnlyDuringTheFirstPass) {
  for (int i = 0; i < 5; ++i) stream(kAll);
  std::vector<LoopBatch> sent{fan_out({test::event(1000, "7", 1, true)})};
  std::vector<size_t> at;  // writes done when the intake looked
  pass(
      [&] {
        if (at.size() == 8)
          return;  // an intake that looked on and on (a pass that never ends) fails below, not by timeout
        at.push_back(writes.size());
        sent.push_back(fan_out({odds(1000 + static_cast<int64_t>(at.size()), "7", 1001, 185 + int(at.size()))}));
      },
      2);
  EXPECT_EQ(at, (std::vector<size_t>{2, 4}));
  std::vector<std::string> all;
  for (const LoopBatch& b : sent) all = cat(all, of(b));
  for (StreamConn* c : std::vector<StreamConn*>{conns[0].get(), conns[4].get()}) {
    std::vector<std::string> got;
    size_t n = 0;
    for (const Write& w : writes) {
      if (w.c != c) continue;
      got = cat(got, w.frames);
      ++n;
    }
    EXPECT_LE(n, 2u);
    EXPECT_EQ(got, all);
  }
  EXPECT_EQ(writes.size(), 5u + 4u);  // the first four again at the end of the pass
}

// A connection closed during the pass (its close frame queued and marked):
// written in the same call, with or without intake.
TEST_F(WritePass, WhatThePassMarksIsWrittenInIt) {
  StreamConn* a = stream(kAll);
  fan_out({test::event(1000, "7", 1, true)});
  StreamConn* late = stream(kAll);  // not marked by the fan-out
  auto close = [&](StreamConn* c) {
    closed.push_back(c);
    c->q.push_final(control_frame(ws::kClose, ""));
    ctx->out.mark(c);
  };
  auto write = [&](StreamConn* c) {
    writes.push_back({c, take(*c)});
    c->q.written();
  };
  auto none = [] {};
  for (bool intake : {false, true}) {
    SCOPED_TRACE(intake);
    writes.clear();
    ctx->out.mark(a);
    ctx->out.doomed.push_back(late);
    if (intake)
      write_pass(ctx->out, &none, 1, close, write);
    else
      write_pass(ctx->out, static_cast<decltype(none)*>(nullptr), 1, close, write);
    ASSERT_EQ(writes.size(), 2u);
    EXPECT_EQ(writes[0].c, a);
    EXPECT_EQ(writes[1].c, late);
    EXPECT_TRUE(ctx->out.dirty.empty());
  }
  EXPECT_EQ(closed, (std::vector<StreamConn*>{late, late}));
}

// A paced drain (--relay-pace) leaves the lists filled for the timer's
// pass; a connection freed meanwhile (Outbox::forget, from the loop's close
// callback) is neither written nor closed by that pass, and the others are.
TEST_F(WritePass, AConnectionForgottenBetweenTurnsIsLeftOutOfThePass) {
  StreamConn* a = stream(kAll);
  StreamConn* gone = stream(kAll);
  StreamConn* doomed = stream(kAll);
  StreamConn* c = stream(kAll);
  fan_out({test::event(1000, "7", 1, true)});
  ctx->out.doomed.push_back(doomed);
  ctx->out.forget(gone);
  ctx->out.forget(doomed);
  EXPECT_FALSE(doomed->dirty) << "forget leaves nothing that says it is listed";
  pass([] {});
  ASSERT_EQ(writes.size(), 2u);
  EXPECT_EQ(writes[0].c, a);
  EXPECT_EQ(writes[1].c, c);
  EXPECT_TRUE(closed.empty());
}

}  // namespace
}  // namespace oddsrelay::relay
