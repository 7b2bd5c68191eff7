// oddsload's frame reading: an INFO's numbers in one pass, whatever else the
// object holds, and an odds frame's newest "ls".
#include "tools/oddsload/frame_fields.h"

#include <gtest/gtest.h>

namespace oddsrelay::load {
namespace {

TEST(FrameFields, AMarkerInfoGivesEveryStamp) {
  InfoFields f;
  ASSERT_TRUE(read_info(
      R"({"seq":812,"from":790,"at":1796285195828,"arrived_us":1796285195828123,"applied_us":1796285195828200,)"
      R"("encoded_us":1796285195828250,"digest":"00ab"})",
      f));
  EXPECT_TRUE(f.has_seq && f.has_from && f.has_at && f.has_arrived && f.has_applied && f.has_encoded);
  EXPECT_FALSE(f.ready || f.has_conflated);
  EXPECT_EQ(f.seq, 812);
  EXPECT_EQ(f.from, 790);
  EXPECT_EQ(f.at, 1796285195828.0);
  EXPECT_EQ(static_cast<int64_t>(f.arrived_us), 1796285195828123);
  EXPECT_EQ(static_cast<int64_t>(f.applied_us), 1796285195828200);
  EXPECT_EQ(static_cast<int64_t>(f.encoded_us), 1796285195828250);
}

TEST(FrameFields, TheReadyInfoSkipsItsArraysAndStrings) {
  InfoFields f;
  // "at" inside an array or a string is not the member: only the top level counts.
  ASSERT_TRUE(read_info(R"({"ready":true,"protocol":"v2","epoch":"e\"at\":5","seq":502,"sports":[1,{"at":9},[3]],)"
                        R"("channels":["evt","odds"],"at":17,"frames":20})",
                        f));
  EXPECT_TRUE(f.ready);
  EXPECT_EQ(f.seq, 502);
  EXPECT_EQ(f.at, 17);
  EXPECT_FALSE(f.has_from);
}

TEST(FrameFields, ConflatedAndAFractionalAt) {
  InfoFields f;
  ASSERT_TRUE(read_info(R"({ "seq" : 9 , "from":4,"at":1767225600000.125,"conflated":3 })", f));
  EXPECT_TRUE(f.has_conflated);
  EXPECT_EQ(f.conflated, 3);
  EXPECT_EQ(f.at, 1767225600000.125);
  EXPECT_EQ(f.from, 4);
}

TEST(FrameFields, WhatIsNotAnObjectIsRefused) {
  for (const char* bad : {"", "[1]", R"({"seq":1)", R"({"seq" 1})", R"({"a":"unterminated})", R"({"a":[1,2})"}) {
    InfoFields f;
    EXPECT_FALSE(read_info(bad, f)) << bad;
  }
  InfoFields f;
  EXPECT_TRUE(read_info("{}", f));
  EXPECT_FALSE(f.has_seq);
  ASSERT_TRUE(read_info(R"({"seq":null})", f));
  EXPECT_FALSE(f.has_seq);  // not a number
}

TEST(FrameFields, OnlyTheRootsReadyCountsAndWhatFollowsTheObjectIsNotRead) {
  InfoFields f;
  ASSERT_TRUE(read_info(R"({"x":{"ready":true,"seq":4},"y":[{"seq":5}],"seq":6} trailing)", f));
  EXPECT_FALSE(f.ready);
  EXPECT_EQ(f.seq, 6);
  InfoFields g;
  ASSERT_TRUE(read_info(R"({"ready":null,"seq":"7"})", g));
  EXPECT_TRUE(g.ready);     // whatever its value
  EXPECT_FALSE(g.has_seq);  // a string, not a number
}

TEST(FrameFields, TheNewestLineTimeOfAnOddsFrame) {
  EXPECT_EQ(newest_ls(R"({"1001":{"s":{"2001":[173,0,null,17],"s":0,"ls":1796285195798}},)"
                      R"("1011":{"s-1.5":{"2012":[1,0,"-1.5",3],"s":0,"ls":1796285195900},)"
                      R"("s1.5":{"2012":[1,0,"1.5",3],"s":0,"ls":1796285195614}}})"),
            1796285195900);
  EXPECT_EQ(newest_ls(R"({"1001":{"s":{"2001":[173,0,null,17],"s":0}}})"), 0);
  EXPECT_EQ(newest_ls(R"("ls":)"), 0);      // the key at the very end
  EXPECT_EQ(newest_ls(R"("ls":null)"), 0);  // not a number
  EXPECT_EQ(newest_ls(R"("ls":5,"ls":12,"ls":7)"), 12);
}

}  // namespace
}  // namespace oddsrelay::load
