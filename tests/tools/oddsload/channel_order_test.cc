// oddsload's per-channel order check: a line time going back on a channel
// is counted, on that channel only, and "no ls" never is.
#include "tools/oddsload/channel_order.h"

#include <gtest/gtest.h>

namespace oddsrelay::load {
namespace {

TEST(ChannelOrder, ALineTimeGoingBackOnItsChannelIsCaught) {
  ChannelIndex channels;
  ChannelOrder a, b;
  const uint32_t x = channels.of(10000002), y = channels.of(10000011);
  EXPECT_NE(x, y);
  EXPECT_EQ(channels.of(10000002), x);  // the same number, the same index
  EXPECT_FALSE(a.went_back(x, 100));
  EXPECT_FALSE(a.went_back(x, 100));  // equal is not back
  EXPECT_FALSE(a.went_back(y, 50));   // another channel has its own clock
  EXPECT_TRUE(a.went_back(x, 99));
  EXPECT_FALSE(a.went_back(x, 0));  // a frame with no ls says nothing
  EXPECT_FALSE(a.went_back(x, 120));
  EXPECT_TRUE(a.went_back(x, 110));  // against the newest, not the last
  EXPECT_TRUE(a.went_back(x, 115));  // 110 did not lower the mark
  EXPECT_FALSE(a.went_back(x, 0));
  EXPECT_TRUE(a.went_back(x, 119));  // nor did a frame without ls
  EXPECT_FALSE(b.went_back(x, 1));   // each subscriber has its own
}

}  // namespace
}  // namespace oddsrelay::load
