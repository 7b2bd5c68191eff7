// POST /rdstn's answer (rest/rdstn.h): one object per key, read from one
// snapshot, and bounded in bytes whatever the 200 keys ask for.
#include "rest/rdstn.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "protocol/api/errors.h"
#include "tests/test_util.h"

namespace oddsrelay::rest {
namespace {

SnapshotPtr live_football() {
  Engine e;
  test::apply_all(e, {test::event(1000, "s7-1.5", 1, true),
                      test::market(1001, "s7-1.5", 1001, {{"s", 0, {{2001, 185, 0}, {2002, 340, 0}}}}),
                      test::event(1002, "s7-1.6", 1, true)});
  return e.current();
}

std::string body_of(const std::string& op, const std::string& key, int times) {
  std::string b = "[[\"" + op + "\",[";
  for (int i = 0; i < times; ++i) b += (i ? ",\"" : "\"") + key + "\"";
  return b + "]]]";
}

TEST(Rdstn, EveryKeyIsAnsweredInOrderEvenWhenRepeated) {
  SnapshotPtr s = live_football();
  RdstnRequest req;
  std::string error, out;
  ASSERT_TRUE(parse_rdstn(body_of("ga", "bm1_el1", 3), req, error)) << error;
  ASSERT_TRUE(write_rdstn(req, *s, out));
  rapidjson::Document d;
  d.Parse(out.data(), out.size());
  ASSERT_TRUE(d.IsArray()) << out;
  ASSERT_EQ(d.Size(), 3u);
  for (const auto& v : d.GetArray()) {
    ASSERT_TRUE(v.HasMember("bm1_el1")) << out;
    EXPECT_EQ(v["bm1_el1"].MemberCount(), 2u) << out;  // both live events
  }
}

// A small body that names one list many times (the same list under other
// bookmaker indexes too) would build that many copies of it: past the bound
// the answer stops, `out` holds what it held before, and the route says 400.
TEST(Rdstn, AnAnswerPastItsBoundStopsThereAndLeavesNothing) {
  SnapshotPtr s = live_football();
  RdstnRequest req;
  std::string error;
  ASSERT_TRUE(parse_rdstn(body_of("ga", "bm1_el1", 200), req, error)) << error;
  std::string whole;
  ASSERT_TRUE(write_rdstn(req, *s, whole));
  const size_t one = whole.size() / 200;
  std::string out = "kept";
  EXPECT_FALSE(write_rdstn(req, *s, out, one * 50));
  EXPECT_EQ(out, "kept");
  out.clear();
  EXPECT_TRUE(write_rdstn(req, *s, out, whole.size()));
  EXPECT_EQ(out, whole);
  EXPECT_EQ(RdstnLimits{}.max_answer, size_t{16} << 20);  // what err::kRdstnAnswerTooLarge says
  EXPECT_NE(std::string(err::kRdstnAnswerTooLarge).find("16 MiB"), std::string::npos);
}

}  // namespace
}  // namespace oddsrelay::rest
