// Everything the engine knows about one event, keyed by its event number:
// the event object, its odds, its scoreboard and its stats. Each part is an
// immutable object shared between snapshot versions; an update copies only
// the part it changes (docs/architecture.md, step 2).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/line_history.h"
#include "engine/core/market.h"
#include "protocol/feed_record.h"

namespace oddsrelay {

// One change of the scoreline, for the widget's timeline.
struct ScorePoint {
  int64_t at = 0;
  int32_t home = 0, away = 0;
  std::string clock;
};

struct ScoreState {
  // The latest score record as received, except its kickoff: when the
  // record has none and the event is not listed, the kickoff known before
  // (the event's, kept when the event was removed).
  feed::ScoreRec last;
  int64_t ts = 0;  // at of that record
  static constexpr size_t kTimelineMax = 64;
  std::vector<ScorePoint> timeline;  // scoreline changes, oldest first; the last kTimelineMax
  // The settlement anchor (docs/settlement.md rules 1 and 9): fixed by the first `ended`
  // record, replaced by a later `ended` record with another score or result.
  bool ended = false;
  std::optional<std::pair<int32_t, int32_t>> final_score;  // none: no score known
  feed::MatchResult final_result = feed::MatchResult::None;
  uint32_t final_version = 0;  // 1 at the first `ended`, +1 per correction
  int64_t final_at = 0;        // at of the record that set the current final
  MarketList odds_at_end;      // odds at the first `ended` (the last read before full time)
};

struct StatsState {
  std::array<std::optional<std::pair<int32_t, int32_t>>, 6> values;  // feed::kStatNames order
  bool final = false;
  int64_t ts = 0;
};

struct EventEntry {
  uint64_t edit = 0;                              // batch that created it: the writer may still mutate it
  uint32_t change = 0;                            // writer only: 1 + its index in that batch's changes, 0 = none yet
  uint64_t number = 0;                            // identity
  std::string key;                                // display id: the id of the last `event` record
  std::shared_ptr<const feed::EventObject> info;  // null: not listed (removed or odds only)
  MarketList markets;                             // its odds; empty: none
  // The sum of its markets' Market::digest (engine/core/odds_digest.h),
  // kept by the writer as markets come and go: a stream's digest adds one
  // number per event it admits whole (relay/view_digest.h).
  uint64_t odds_digest = 0;
  std::shared_ptr<const ScoreState> score;
  // score && score->ended, kept by the writer wherever `score` is set (the
  // engine's replace_score, restore_entry): every market record asks it,
  // and reading it here, in the entry the record already holds, saves a
  // cache miss on the score a record (perf/PROFILE.md s23).
  bool ended = false;
  std::shared_ptr<const StatsState> stats;
  LineHistoryPtr history;  // lines priced and withdrawn before full time (settlement, rule 7)
  int64_t updated_at = 0;  // at of the last record applied to it
  // Writer only, never read by readers: the `at` under which the entry
  // sits in the engine's retention index (kNotRetiring: not in it). It may
  // trail updated_at (engine/core/retention.h); mutable so that the writer
  // can re-key an entry it shares with published snapshots.
  static constexpr int64_t kNotRetiring = INT64_MIN;
  mutable int64_t retire_at = kNotRetiring;

  bool listed() const { return info != nullptr; }
  int32_t sport() const { return info ? info->sport : 0; }
  bool live() const { return info && info->live; }
  const Market* market(uint32_t id) const { return find_market(markets, id); }
  bool empty() const { return !info && markets.empty() && !score && !stats; }
};

}  // namespace oddsrelay
