#include "protocol/event_id.h"

#include <gtest/gtest.h>

namespace oddsrelay {

TEST(EventId, FullKeyWithChannel) {
  auto p = parse_event_id("s7-101.10000001");
  EXPECT_EQ(p.form, IdForm::Full);
  EXPECT_EQ(p.number, 10000001u);
  EXPECT_EQ(p.provider, "7");
  EXPECT_EQ(p.channel, "101");
}

TEST(EventId, FullKeyWithoutChannel) {
  auto p = parse_event_id("s7-10000001");
  EXPECT_EQ(p.form, IdForm::FullNoChannel);
  EXPECT_EQ(p.number, 10000001u);
  EXPECT_EQ(p.channel, "");
}

TEST(EventId, LiveAndPrematchBindings) {
  auto l = parse_event_id("s7_l101.10000001");
  EXPECT_EQ(l.form, IdForm::LiveBinding);
  EXPECT_EQ(l.number, 10000001u);
  EXPECT_EQ(l.channel, "101");
  auto p = parse_event_id("s7_p20101.10000001");
  EXPECT_EQ(p.form, IdForm::PrematchBinding);
  EXPECT_EQ(p.number, 10000001u);
  EXPECT_EQ(p.channel, "20101");
}

TEST(EventId, NumericTail) {
  auto p = parse_event_id("10000001");
  EXPECT_EQ(p.form, IdForm::Numeric);
  EXPECT_EQ(p.number, 10000001u);
}

TEST(EventId, EveryFormResolvesToOneIdentity) {
  for (const char* id : {"s7-101.42", "s7-42", "s7_l101.42", "s7_p9.42", "42", "sabc-x1.42"})
    EXPECT_EQ(parse_event_id(id).number, 42u) << id;
}

TEST(EventId, RejectsGarbage) {
  for (const char* id : {"",
                         "s",
                         "s7",
                         "s7-",
                         "s7-.5",
                         "s7-101.",
                         "s7_x101.5",
                         "s7_l5",
                         "s7_l.5",
                         "x7-1.5",
                         "-5",
                         "+5",
                         " 5",
                         "5 ",
                         "0",
                         "s7-0",
                         "12a",
                         "s7-1.2.3",
                         "s7--1.5",
                         "s-1.5",
                         "99999999999999999999",
                         "s7-1.99999999999999999999",
                         "s7_l1.5x",
                         "s7-1_2.5"})
    EXPECT_FALSE(parse_event_id(id).ok()) << "'" << id << "'";
}

TEST(EventId, LargestNumberFits) { EXPECT_EQ(parse_event_id("9999999999999999999").number, 9999999999999999999ull); }

}  // namespace oddsrelay
