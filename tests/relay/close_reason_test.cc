// The close-reason table (relay/close_reason.h) is complete: every reason
// has its row, in order, with a close code a server may send (or the
// access log's 1006), a text and a unique name; status fields are unique,
// each counted; what /metrics shows is also in /v1/status; and the relay's
// status fields and closes{reason} samples are the table's.
#include "relay/close_reason.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace oddsrelay::relay {
namespace {

TEST(CloseReason, EveryReasonHasACompleteRow) {
  std::set<std::string_view> labels, fields;
  for (size_t i = 0; i < kCloseReasons; ++i) {
    const CloseInfo& r = kCloseTable[i];
    SCOPED_TRACE(r.label);
    EXPECT_EQ(static_cast<size_t>(r.reason), i);
    EXPECT_TRUE(ws::valid_close_code(r.code) || r.reason == CloseReason::Lost) << r.code;
    EXPECT_FALSE(r.text.empty());
    EXPECT_FALSE(r.label.empty());
    EXPECT_TRUE(labels.insert(r.label).second) << "label used twice";
    if (r.status) {
      EXPECT_TRUE(fields.insert(r.status).second) << "status field used twice";
      EXPECT_NE(r.counter, nullptr) << "a status field with no counter";
    }
    if (r.exposed) {
      EXPECT_NE(r.status, nullptr) << "a /metrics sample with no status field to equal";
    }
  }
  EXPECT_EQ(close_info(CloseReason::Lost).code, 1006);
}

TEST(CloseReason, CountingGoesToTheReasonsCounter) {
  RelayStats s;
  count_close(s, CloseReason::Stalled);
  count_close(s, CloseReason::Stalled);
  count_close(s, CloseReason::KeyLimit);
  count_close(s, CloseReason::PeerClosed);  // not counted
  EXPECT_EQ(s.closed_stalled.load(), 2u);
  EXPECT_EQ(s.refused_limit.load(), 1u);
  EXPECT_EQ(s.closed_soft_limit.load() + s.closed_slow.load() + s.closed_protocol.load(), 0u);
}

TEST(CloseReason, DetailFollowsTheText) {
  EXPECT_EQ(close_text(CloseReason::Heartbeat, "60 s"), "no pong within 60 s");
}

TEST(CloseReason, RelayStatsListEveryCountedReasonWithItsLabel) {
  for (const CloseInfo& r : kCloseTable) {
    if (!r.status) continue;
    SCOPED_TRACE(r.status);
    int found = 0;
    for (const auto& st : relay_stats()) {
      if (std::string_view(st.key) != r.status) continue;
      ++found;
      EXPECT_EQ(st.value, r.counter);
      EXPECT_EQ(st.series.label.value, r.exposed ? r.label : std::string_view{});
      EXPECT_EQ(st.series.family, r.exposed ? "oddsrelay_stream_closes_total" : std::string_view{});
    }
    EXPECT_EQ(found, 1);
  }
}

}  // namespace
}  // namespace oddsrelay::relay
