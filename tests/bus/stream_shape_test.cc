// What an ingest says when the stream it would publish to was made by
// someone else with other settings (engine/bus/nats_link.h
// shape_differences): a stream that cannot carry the log is an error, other
// storage or replicas a warning naming both values; the same stream, nothing.
#include <gtest/gtest.h>

#include "engine/bus/nats_link.h"

namespace oddsrelay::bus {
namespace {

TEST(StreamShape, SameShapeSaysNothing) {
  bool fatal = true;
  EXPECT_EQ(shape_differences("ODDS", {{"ODDS.log"}, true, 3}, {{"ODDS.log"}, true, 3}, fatal), "");
  EXPECT_FALSE(fatal);
}

TEST(StreamShape, OtherReplicasOrStorageIsAWarning) {
  bool fatal = true;
  const std::string d = shape_differences("ODDS", {{"ODDS.log"}, true, 3}, {{"ODDS.log"}, true, 1}, fatal);
  EXPECT_FALSE(fatal);
  EXPECT_NE(d.find("stream ODDS exists with 1 replica(s), not 3"), std::string::npos) << d;
  EXPECT_NE(d.find("used as it is"), std::string::npos) << d;
  const std::string m = shape_differences("ODDS_SNAP", {{"ODDS.snap.>"}, true, 1}, {{"ODDS.snap.>"}, false, 1}, fatal);
  EXPECT_FALSE(fatal);
  EXPECT_NE(m.find("memory storage, not file"), std::string::npos) << m;
}

TEST(StreamShape, AStreamWithoutTheLogSubjectIsAnError) {
  bool fatal = false;
  const std::string d = shape_differences("ODDS", {{"ODDS.log"}, true, 1}, {{"OTHER.>"}, true, 1}, fatal);
  EXPECT_TRUE(fatal);
  EXPECT_NE(d.find("subjects [OTHER.>], not [ODDS.log]"), std::string::npos) << d;
  EXPECT_NE(d.find("cannot carry this log"), std::string::npos) << d;
  // More subjects, ours among them: it works, but it is said.
  const std::string w = shape_differences("ODDS", {{"ODDS.log"}, true, 1}, {{"ODDS.log", "X"}, true, 1}, fatal);
  EXPECT_FALSE(fatal);
  EXPECT_NE(w.find("subjects [ODDS.log X]"), std::string::npos) << w;
}

}  // namespace
}  // namespace oddsrelay::bus
