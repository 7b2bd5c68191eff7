// Settlement V1 (docs/settlement.md): per
// outcome of every line an event ever priced (its odds at full time and the
// lines withdrawn before, engine/core/line_history.h), win / lose / void /
// pending with a reason, from the final score (or, in play, from the
// current score for outcomes that can no longer change). Pure: reads one
// event entry and the catalog's market semantics, so the same journal gives
// the same settlement after a restart, and a cache keyed by the final-score
// version can hold the answer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/catalog/catalog.h"
#include "engine/core/event_entry.h"

namespace oddsrelay {

enum class SettleResult : uint8_t { Win, Lose, Void, Pending };
const char* settle_result_name(SettleResult r);

namespace reason {
inline constexpr const char* kPush = "push";
inline constexpr const char* kNoScore = "final score unavailable";
inline constexpr const char* kSuspended = "suspended at last read";
inline constexpr const char* kNotEnded = "event has not ended";
inline constexpr const char* kQuarterLine = "quarter line: void in V1";
inline constexpr const char* kStats = "match stats are not yet published";
inline constexpr const char* kHalfTime = "half-time score not captured in V1";
inline constexpr const char* kPeriod = "period scores not captured in V1";
inline constexpr const char* kSequence = "needs the order of scoring: not covered in V1";
inline constexpr const char* kNotCovered = "market not covered in V1";
inline constexpr const char* kUnknownMarket = "market not in the catalog";
inline constexpr const char* kNoLine = "line value unavailable";
inline constexpr const char* kAbandoned = "event abandoned";
inline constexpr const char* kCancelled = "event cancelled";
inline constexpr const char* kExpunged = "event expunged";
}  // namespace reason

struct OutcomeSettlement {
  uint32_t outcome = 0;
  SettleResult result = SettleResult::Pending;
  const char* reason = nullptr;  // for void and pending
};

struct LineSettlement {
  std::string key;         // line key, e.g. "s2.5"
  std::string line;        // its value (`special` of the odds); empty = null
  bool withdrawn = false;  // settled on its read when it was withdrawn, before full time
  int64_t last_read = 0;   // `ls` of that read
  std::vector<OutcomeSettlement> outcomes;
};

struct MarketSettlement {
  uint32_t market = 0;
  std::vector<LineSettlement> lines;
};

struct Settlement {
  bool inplay = false;  // mode: "inplay" or "final"
  feed::ScoreStatus status = feed::ScoreStatus::Scheduled;
  feed::MatchResult result = feed::MatchResult::None;  // for ended events
  std::optional<std::pair<int32_t, int32_t>> score;    // final (or current, in play)
  int64_t settled_at = 0;                              // at of the score record it rests on
  uint32_t final_version = 0;  // the record's `revision`: 1 at the first final, +1 per correction
  std::vector<MarketSettlement> markets;
  uint32_t covered = 0, voided = 0, pending = 0;  // outcomes: win/lose, void, pending
};

// `include_inplay`: settle a live event's decided outcomes (mode inplay).
Settlement settle(const EventEntry& e, const Catalog& catalog, bool include_inplay);

}  // namespace oddsrelay
