// The relay loop's pace (relay/write_pace.h): off at 0 and 100; a pass of P
// at pace pct lets the next one start P * 100 / pct after the last began,
// so a batch that just missed a pass waits at most P * (100 - pct) / pct
// after it; a short pass holds little; the bound follows the last pass
// only, so a long pass long ago holds nothing now.
#include "relay/write_pace.h"

#include <gtest/gtest.h>

namespace oddsrelay::relay {
namespace {

TEST(WritePace, OffAtZeroAndAtAHundredPercent) {
  for (unsigned pct : {0u, 100u, 250u}) {
    WritePace p(pct);
    EXPECT_FALSE(p.on()) << pct;
    p.passed(1'000, 2'000'000);
    EXPECT_EQ(p.wait_ns(2'000'001), 0u) << pct;
  }
  EXPECT_TRUE(WritePace(50).on());
}

TEST(WritePace, TheNextPassWaitsForThePaceOfTheLast) {
  WritePace p(50);
  EXPECT_EQ(p.wait_ns(5), 0u);     // no pass yet
  p.passed(1'000'000, 1'400'000);  // 400 us: the next may begin at 1.8 ms
  EXPECT_EQ(p.wait_ns(1'400'000), 400'000u);
  EXPECT_EQ(p.wait_ns(1'700'000), 100'000u);
  EXPECT_EQ(p.wait_ns(1'800'000), 0u);
  EXPECT_EQ(p.wait_ns(9'000'000), 0u);
}

TEST(WritePace, AFrameIsHeldAtMostThePassTimesTheIdleShare) {
  for (unsigned pct : {20u, 50u, 80u, 99u}) {
    WritePace p(pct);
    const uint64_t start = 7'000'000, pass = 1'000'000;
    p.passed(start, start + pass);
    // A batch that arrives just as the pass ends waits the longest.
    const uint64_t held = p.wait_ns(start + pass);
    EXPECT_EQ(held, pass * (100 - pct) / pct) << pct;
    EXPECT_LE(held, pass * 4) << pct;  // 20%: four passes' time at most
  }
}

TEST(WritePace, AShortPassHoldsLittleAndALongOneOnlyUntilTheNext) {
  WritePace p(80);
  p.passed(0, 10'000'000);  // 10 ms: the loop was far behind
  EXPECT_EQ(p.wait_ns(10'000'000), 2'500'000u);
  p.passed(12'500'000, 12'520'000);  // then a pass of 20 us
  EXPECT_EQ(p.wait_ns(12'520'000), 5'000u);
  EXPECT_EQ(p.wait_ns(12'525'000), 0u);
}

}  // namespace
}  // namespace oddsrelay::relay
