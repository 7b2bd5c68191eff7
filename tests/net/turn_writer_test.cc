// The relay's turn of sends through io_uring (protocol/net/turn_writer.h) on
// real loopback pairs: a queued send's result is the bytes the socket took;
// a partial one continues through Conn::sent from exactly where the
// socket stopped (the peer gets every byte once, in order); a full socket
// says -EAGAIN and the whole write goes the uv_write way; turn after turn
// over several connections nothing is lost or reordered; and a connection
// closed with its send queued still has that send issued on its own socket
// and reported, so its owner frees the buffers only then. Skipped where the
// build or the kernel has no io_uring.
#include "protocol/net/turn_writer.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "protocol/net/conn.h"
#include "tests/net/loopback.h"

namespace oddsrelay::net {
namespace {

class TurnWriterTest : public test::LoopbackTest {
 protected:
  void SetUp() override {
    test::LoopbackTest::SetUp();
    std::string why;
    if (!w.open(why)) GTEST_SKIP() << why;
  }
  // One write's buffers and the bytes they name, alive until its result.
  struct Write {
    std::vector<std::string> parts;
    std::vector<uv_buf_t> bufs;
    explicit Write(std::vector<std::string> p) : parts(std::move(p)) {
      for (std::string& s : parts) bufs.push_back(uv_buf_init(s.data(), static_cast<unsigned>(s.size())));
    }
    size_t size() const {
      size_t n = 0;
      for (const std::string& s : parts) n += s.size();
      return n;
    }
  };
  // The one result of a turn that queued one write.
  ssize_t only_result(void* tag) {
    const std::vector<TurnWriter::Done>& done = w.complete();
    EXPECT_EQ(done.size(), 1u);
    if (done.size() != 1) return -1;
    EXPECT_EQ(done[0].tag, tag);
    return done[0].result;
  }
  TurnWriter w;
};

TEST_F(TurnWriterTest, ASendThatFitsIsReportedWholeAndArrives) {
  ASSERT_TRUE(c.open(&loop, p.ours, h, rb, &h));
  Write a({"hello ", "world"});
  w.queue(c, a.bufs.data(), 2, &a);
  EXPECT_TRUE(c.queued());
  EXPECT_EQ(w.queued(), 1u);
  EXPECT_EQ(only_result(&a), static_cast<ssize_t>(a.size()));
  EXPECT_FALSE(c.queued());
  EXPECT_EQ(w.queued(), 0u);
  std::string got;
  spin([&] { return got.size() < a.size(); }, &got);
  EXPECT_EQ(got, "hello world");
}

TEST_F(TurnWriterTest, APartialSendContinuesExactlyWhereTheSocketStopped) {
  ASSERT_TRUE(c.open(&loop, p.ours, h, rb, &h));
  Write a({pattern(1 << 20), "middle", pattern(300'000) + "end"});
  w.queue(c, a.bufs.data(), 3, &a);
  const ssize_t took = only_result(&a);
  ASSERT_GT(took, 0);
  ASSERT_LT(static_cast<size_t>(took), a.parts[0].size());  // the socket's buffers are far smaller
  ASSERT_EQ(c.sent(a.bufs.data(), 3, took), took);
  EXPECT_TRUE(c.writing());
  EXPECT_EQ(c.unsent(), a.size() - static_cast<size_t>(took));
  std::string got;
  spin([&] { return h.written_calls == 0 || got.size() < a.size(); }, &got);
  EXPECT_EQ(h.written_status, 0);
  EXPECT_EQ(h.written_bytes, a.size() - static_cast<size_t>(took));
  EXPECT_TRUE(got == a.parts[0] + a.parts[1] + a.parts[2])
      << "bytes lost, repeated or reordered (got " << got.size() << " of " << a.size() << ")";
}

// A connection far behind has more frames queued than one send may name
// (IOV_MAX): the send takes the first IOV_MAX at most, the rest follows.
TEST_F(TurnWriterTest, MoreBuffersThanOneSendMayNameGoOutInOrder) {
  ASSERT_TRUE(c.open(&loop, p.ours, h, rb, &h));
  std::vector<std::string> parts;
  for (int i = 0; i < 1500; ++i) parts.push_back("<" + std::to_string(i) + ">");
  Write a(std::move(parts));
  w.queue(c, a.bufs.data(), static_cast<unsigned>(a.bufs.size()), &a);
  const ssize_t took = only_result(&a);
  ASSERT_GT(took, 0);  // not refused whole
  ASSERT_LT(static_cast<size_t>(took), a.size());
  ASSERT_EQ(c.sent(a.bufs.data(), static_cast<unsigned>(a.bufs.size()), took), took);
  std::string got, want;
  for (const std::string& s : a.parts) want += s;
  spin([&] { return got.size() < want.size(); }, &got);
  EXPECT_EQ(got, want);
}

TEST_F(TurnWriterTest, AFullSocketSaysEagainAndTheWholeWriteGoesThroughLibuv) {
  ASSERT_TRUE(c.open(&loop, p.ours, h, rb, &h));
  std::string fill = pattern(64 * 1024), sent;
  while (true) {  // the peer reads nothing: fill the socket
    const ssize_t n = ::send(p.ours, fill.data(), fill.size(), MSG_DONTWAIT);
    if (n <= 0) break;
    sent.append(fill, 0, static_cast<size_t>(n));
  }
  Write a({"after ", "the fill"});
  w.queue(c, a.bufs.data(), 2, &a);
  const ssize_t r = only_result(&a);
  EXPECT_EQ(r, -EAGAIN);
  ASSERT_EQ(c.sent(a.bufs.data(), 2, r), 0);  // none taken, all of it handed to uv_write
  EXPECT_EQ(c.unsent(), a.size());
  std::string got;
  spin([&] { return got.size() < sent.size() + a.size(); }, &got);
  EXPECT_TRUE(got == sent + "after the fill") << got.size();
}

// Two connections, turn after turn, each turn's write three numbered pieces
// of several sizes (some far past the socket's buffers): each peer gets its
// pieces once, in order, whichever path carried their bytes.
TEST_F(TurnWriterTest, TurnAfterTurnNothingIsLostOrReordered) {
  test::Pair p2;
  test::Recorder h2;
  Conn c2;
  ASSERT_TRUE(c.open(&loop, p.ours, h, rb, &h));
  ASSERT_TRUE(c2.open(&loop, p2.ours, h2, rb, &h2));
  Conn* conns[2] = {&c, &c2};
  test::Pair* peers[2] = {&p, &p2};
  std::string want[2], got[2];
  std::unique_ptr<Write> held[2];  // the write each connection has out, until its result (or on_written)
  int next = 0;
  for (int turn = 0; turn < 60; ++turn) {
    for (int k = 0; k < 2; ++k) {
      if (conns[k]->writing()) continue;  // the rest of its last write is still going out
      std::vector<std::string> parts;
      for (int j = 0; j < 3; ++j)
        parts.push_back("<" + std::to_string(next++) + ">" + pattern((turn * 7919 + j * 104729) % 150'000));
      held[k] = std::make_unique<Write>(std::move(parts));
      for (const std::string& s : held[k]->parts) want[k] += s;
      w.queue(*conns[k], held[k]->bufs.data(), 3, held[k].get());
    }
    for (const TurnWriter::Done& d : w.complete()) {
      const int k = d.tag == held[0].get() ? 0 : 1;
      ASSERT_EQ(d.tag, held[k].get());
      ASSERT_GE(conns[k]->sent(held[k]->bufs.data(), 3, d.result), 0);
    }
    for (int i = 0; i < 20; ++i) {
      uv_run(&loop, UV_RUN_NOWAIT);
      for (int k = 0; k < 2; ++k) peers[k]->take(got[k]);
    }
  }
  spin([&] { return got[0].size() < want[0].size() || got[1].size() < want[1].size() || c.writing() || c2.writing(); },
       &got[0]);
  for (int i = 0; i < 200000 && got[1].size() < want[1].size(); ++i) {
    uv_run(&loop, UV_RUN_NOWAIT);
    p2.take(got[1]);
  }
  EXPECT_TRUE(got[0] == want[0]) << got[0].size() << " of " << want[0].size();
  EXPECT_TRUE(got[1] == want[1]) << got[1].size() << " of " << want[1].size();
  c2.close();
  spin([&] { return !h2.freed; });  // c2 is the test's: freed before it goes
}

// The owner closes a connection whose send is queued (the relay drops a
// connection mid-pass): the send still goes out on that connection's socket
// before the descriptor is closed, and is reported, so the buffers it names
// are released after the kernel is done with them, not before.
TEST_F(TurnWriterTest, AClosedConnectionsSendIsIssuedAndReportedBeforeItsBuffersGo) {
  ASSERT_TRUE(c.open(&loop, p.ours, h, rb, &h));
  auto a = std::make_unique<Write>(std::vector<std::string>{"last ", "words"});
  w.queue(c, a->bufs.data(), 2, a.get());
  c.close();
  EXPECT_TRUE(c.queued());  // issued, not yet reported: the buffers must stay
  EXPECT_EQ(only_result(a.get()), static_cast<ssize_t>(a->size()));
  EXPECT_FALSE(c.queued());
  a.reset();  // only now
  std::string got;
  EXPECT_TRUE(read_to_eof(got));
  EXPECT_EQ(got, "last words");
}

}  // namespace
}  // namespace oddsrelay::net
