// net::OutQueue: unsent bytes counted by the pieces' sizes, references not
// copied, bytes handed to a write never moved by later appends, and the
// rollback a failed handler needs.
#include "protocol/net/out_queue.h"

#include <gtest/gtest.h>

#include <string>

namespace oddsrelay::net {
namespace {

std::string gathered(OutQueue& q) {
  uv_buf_t bufs[16];
  std::string s;
  const unsigned n = q.gather(bufs, 16);
  for (unsigned i = 0; i < n; ++i) s.append(bufs[i].base, bufs[i].len);
  return s;
}

TEST(OutQueue, ASharedBodyIsReferencedNotCopied) {
  SharedBytes body = make_shared_bytes(std::string(100'000, 'x'));
  OutQueue a, b;
  for (OutQueue* q : {&a, &b})
    for (int i = 0; i < 3; ++i) {  // three pipelined answers each
      q->append("HEAD\r\n\r\n");
      q->share(body);
    }
  EXPECT_EQ(body.use_count(), 7);  // ours and six queued references
  EXPECT_EQ(a.size(), 3 * (8 + 100'000u));
  EXPECT_EQ(a.owned(), 3 * 8u);  // only the heads are copies
  uv_buf_t bufs[16];
  ASSERT_EQ(a.gather(bufs, 16), 6u);
  EXPECT_EQ(bufs[1].base, body->data());  // the write sends the shared bytes themselves
  a.consume(a.size());
  b.clear();
  EXPECT_EQ(body.use_count(), 1);
  EXPECT_TRUE(a.empty());
}

TEST(OutQueue, BytesInAWriteDoNotMoveWhenMoreIsAppended) {
  OutQueue q;
  q.append("first");
  uv_buf_t bufs[4];
  ASSERT_EQ(q.gather(bufs, 4), 1u);
  const char* in_flight = bufs[0].base;
  for (int i = 0; i < 1000; ++i) q.append("more bytes that would grow the first piece's string");
  EXPECT_EQ(std::string(in_flight, 5), "first");
  EXPECT_EQ(q.pieces(), 2u);
  q.consume(2);  // part of the write went
  EXPECT_EQ(q.size(), 3 + 1000 * 51u);
  EXPECT_EQ(gathered(q).substr(0, 3), "rst");
}

TEST(OutQueue, TruncateDropsWhatAFailedHandlerQueued) {
  OutQueue q;
  q.append("HTTP/1.1 200 OK\r\n\r\nok");
  const OutQueue::Mark m = q.mark();
  q.append("HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n");
  q.share(make_shared_bytes("partial"));
  q.append("tail");
  EXPECT_EQ(q.head_since(m).substr(0, 12), "HTTP/1.1 200");
  EXPECT_EQ(q.bytes_since(m), 39 + 7 + 4u);
  q.truncate(m);
  EXPECT_EQ(q.size(), 21u);
  q.append("HTTP/1.1 500");
  EXPECT_EQ(q.head_since(m), "HTTP/1.1 500");
  EXPECT_EQ(gathered(q), "HTTP/1.1 200 OK\r\n\r\nokHTTP/1.1 500");
}

}  // namespace
}  // namespace oddsrelay::net
