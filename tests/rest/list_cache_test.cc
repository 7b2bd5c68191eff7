// The /v1/live and /v1/prematch answer cache (rest/list_cache.h): an answer
// serves only the state (epoch, seq) and the parameters it was built for.
#include "rest/list_cache.h"

#include <gtest/gtest.h>
#include <zlib.h>

namespace oddsrelay::rest {
namespace {

Snapshot state(uint64_t seq, std::string epoch = "e1") {
  Snapshot s;
  s.seq = seq;
  s.epoch = std::move(epoch);
  return s;
}

TEST(ListCache, AnAnswerServesItsStateAndParametersOnly) {
  ListCache c;
  const Snapshot s1 = state(10), s2 = state(11), other_log = state(10, "e2");
  EXPECT_EQ(c.find(s1, true, {}, {}), nullptr);
  c.put(s1, true, {}, {}, "live-all@10");
  c.put(s1, true, 1, {}, "live-1@10");
  c.put(s1, false, 1, 5, "pre-1-5@10");
  ASSERT_NE(c.find(s1, true, {}, {}), nullptr);
  EXPECT_EQ(*c.find(s1, true, {}, {})->body, "live-all@10");
  EXPECT_EQ(*c.find(s1, true, 1, {})->body, "live-1@10");
  EXPECT_EQ(*c.find(s1, false, 1, 5)->body, "pre-1-5@10");
  EXPECT_EQ(c.find(s1, false, 1, {}), nullptr);         // another limit
  EXPECT_EQ(c.find(s1, false, {}, {}), nullptr);        // the other list
  EXPECT_EQ(c.find(s1, true, 2, {}), nullptr);          // another sport
  EXPECT_EQ(c.find(s2, true, {}, {}), nullptr);         // a later state
  EXPECT_EQ(c.find(other_log, true, {}, {}), nullptr);  // the same seq of another log
  c.put(s2, true, {}, {}, "live-all@11");
  EXPECT_EQ(*c.find(s2, true, {}, {})->body, "live-all@11");
  EXPECT_EQ(c.find(s1, true, {}, {}), nullptr);  // replaced
  EXPECT_EQ(c.size(), 3u);
}

TEST(ListCache, GzipOncePerAnswer) {
  ListCache c;
  const Snapshot s = state(1);
  ListCache::Answer& a = c.put(s, true, {}, {}, std::string(5000, 'x'));
  const net::SharedBytes gz = c.gzip(a);
  ASSERT_NE(gz, nullptr);
  EXPECT_EQ(c.gzip(a), gz);
  EXPECT_EQ(c.gzips(), 1u);
  uLongf n = 5000;
  std::string back(n, '\0');
  z_stream z{};
  ASSERT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz->data()));
  z.avail_in = static_cast<uInt>(gz->size());
  z.next_out = reinterpret_cast<Bytef*>(back.data());
  z.avail_out = static_cast<uInt>(n);
  EXPECT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
  inflateEnd(&z);
  EXPECT_EQ(back, *a.body);
  c.put(s, true, {}, {}, "new");  // a new body: compressed anew when asked
  ASSERT_NE(c.gzip(*c.find(s, true, {}, {})), nullptr);
  EXPECT_EQ(c.gzips(), 2u);
}

// Issue 42: a connection queues a reference to the cached answer; a newer
// state replaces the entry while slow readers still send the old bytes,
// which stay alive (and unchanged) until the last of them is written.
TEST(ListCache, AReplacedAnswerLivesOnInTheQueuesStillSendingIt) {
  ListCache c;
  ListCache::Answer& a = c.put(state(1), true, {}, {}, std::string(4096, 'a'));
  net::OutQueue slow1, slow2;
  slow1.share(a.body);
  slow2.share(a.body);
  slow2.share(c.gzip(a));
  std::weak_ptr<const std::string> old_body = a.body, old_gz = a.gz;
  uv_buf_t in_flight[4];
  ASSERT_EQ(slow1.gather(in_flight, 4), 1u);              // slow1's write holds the old bytes
  c.put(state(2), true, {}, {}, std::string(4096, 'b'));  // the state moved on: the entry is replaced
  EXPECT_EQ(*c.find(state(2), true, {}, {})->body, std::string(4096, 'b'));
  ASSERT_FALSE(old_body.expired());
  EXPECT_EQ(std::string(in_flight[0].base, 4096), std::string(4096, 'a'));
  EXPECT_EQ(slow1.size(), 4096u);
  slow1.consume(4096);               // slow1's write completed
  EXPECT_FALSE(old_body.expired());  // slow2 still sends it
  slow2.consume(slow2.size());
  EXPECT_TRUE(old_body.expired());  // freed with the last reference
  EXPECT_TRUE(old_gz.expired());
}

}  // namespace
}  // namespace oddsrelay::rest
