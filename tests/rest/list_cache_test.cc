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
  EXPECT_EQ(c.find(s1, true, {}, {})->body, "live-all@10");
  EXPECT_EQ(c.find(s1, true, 1, {})->body, "live-1@10");
  EXPECT_EQ(c.find(s1, false, 1, 5)->body, "pre-1-5@10");
  EXPECT_EQ(c.find(s1, false, 1, {}), nullptr);         // another limit
  EXPECT_EQ(c.find(s1, false, {}, {}), nullptr);        // the other list
  EXPECT_EQ(c.find(s1, true, 2, {}), nullptr);          // another sport
  EXPECT_EQ(c.find(s2, true, {}, {}), nullptr);         // a later state
  EXPECT_EQ(c.find(other_log, true, {}, {}), nullptr);  // the same seq of another log
  c.put(s2, true, {}, {}, "live-all@11");
  EXPECT_EQ(c.find(s2, true, {}, {})->body, "live-all@11");
  EXPECT_EQ(c.find(s1, true, {}, {}), nullptr);  // replaced
  EXPECT_EQ(c.size(), 3u);
}

TEST(ListCache, GzipOncePerAnswer) {
  ListCache c;
  const Snapshot s = state(1);
  ListCache::Answer& a = c.put(s, true, {}, {}, std::string(5000, 'x'));
  const std::string* gz = c.gzip(a);
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
  EXPECT_EQ(back, a.body);
  c.put(s, true, {}, {}, "new");  // a new body: compressed anew when asked
  ASSERT_NE(c.gzip(*c.find(s, true, {}, {})), nullptr);
  EXPECT_EQ(c.gzips(), 2u);
}

}  // namespace
}  // namespace oddsrelay::rest
