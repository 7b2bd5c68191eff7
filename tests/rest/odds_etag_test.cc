// The GET /v1/odds ETag (rest/odds_etag.h): the same for the same events at
// the same versions in the same order, different when any of that differs.
#include "rest/odds_etag.h"

#include <gtest/gtest.h>

namespace oddsrelay::rest {
namespace {

EventEntry entry(uint64_t number, uint64_t edit) {
  EventEntry e;
  e.number = number;
  e.edit = edit;
  return e;
}

TEST(OddsEtag, NamesTheEventsTheirVersionsAndTheirOrder) {
  const EventEntry a = entry(5001, 7), b = entry(5002, 9), a_later = entry(5001, 8), c = entry(5003, 7);
  const std::string tag = odds_etag(42, {&a, &b});
  EXPECT_EQ(tag.size(), 20u);  // W/" 16 hex "
  EXPECT_EQ(tag.substr(0, 3), "W/\"");
  EXPECT_EQ(tag.back(), '"');
  EXPECT_EQ(odds_etag(42, {&a, &b}), tag);          // same events, same versions
  EXPECT_NE(odds_etag(42, {&a_later, &b}), tag);    // one event has a new version
  EXPECT_NE(odds_etag(42, {&b, &a}), tag);          // another order: other bytes
  EXPECT_NE(odds_etag(42, {&a}), tag);              // fewer events
  EXPECT_NE(odds_etag(42, {&c, &b}), tag);          // another event, same version number
  EXPECT_NE(odds_etag(43, {&a, &b}), tag);          // another run
  EXPECT_NE(odds_etag(42, {}), odds_etag(43, {}));  // even with no events
}

}  // namespace
}  // namespace oddsrelay::rest
