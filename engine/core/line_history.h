// The lines an event priced and then withdrew before full time, each with
// its last read (docs/settlement.md rule 7). Books remove pre-match markets
// at kick-off, period markets at half-time and ladder rungs as the score
// moves; a bet taken on any of them must still be settled. Together with the
// odds at full time (ScoreState::odds_at_end) this is every line the event
// ever priced, each exactly once, and settlement runs over that whole set.
//
// Part of the persistent state: derived from the records alone, so a journal
// replay rebuilds it identically (it is in the state digest). Immutable once
// published; the engine copies it on write like the other parts of an entry.
// At the first `ended` it stops changing and is packed (packed_lines.h) for
// the rest of the event's retention; readers go through history_markets().
#pragma once

#include <cstdint>
#include <memory>

#include "engine/core/market.h"
#include "engine/core/packed_lines.h"
#include "protocol/feed_record.h"

namespace oddsrelay {

struct LineHistory {
  // Bound per event: a feed inventing line keys cannot grow it without
  // limit. The simulator's busiest soccer fixture withdraws about 200 lines
  // (perf/memory/line_history_bench.cc).
  static constexpr uint32_t kMaxLines = 2048;

  uint64_t edit = 0;     // batch that created it: the writer may still mutate it
  MarketList markets;    // per market (sorted by id), only its withdrawn lines, as last read
  PackedLines packed;    // once the event has ended: `markets` packed, and `markets` empty
  uint32_t lines = 0;    // lines held over all markets
  uint32_t dropped = 0;  // lines withdrawn past kMaxLines and not kept
};
using LineHistoryPtr = std::shared_ptr<const LineHistory>;

// Writer side, called by the engine before it replaces or removes a market
// of an event that has not ended. `edit` is the batch being built: a history
// of that batch is changed in place, an older one copied first.
//
// A market record replaces `prev` (null: a new market) with `next`, the
// market it built: lines `prev` priced (at least one outcome) that `next`
// does not price are withdrawn with the state `prev` holds for them; lines
// `next` prices leave the history (they are current again).
// Both return how much history_bytes(h) (engine/core/retention.h) grew, so
// the state's byte count follows without walking the history per record:
// nearly every record changes nothing and costs no walk at all.
int64_t history_on_market(LineHistoryPtr& h, uint64_t edit, const Market* prev, const Market& next);
// The whole market goes (a removal record, or the event's `remove`).
int64_t history_on_removal(LineHistoryPtr& h, uint64_t edit, const Market& prev);
// The event has ended: the history is final and is packed. Nothing may
// change it after this (the engine calls the two above only before).
int64_t history_on_end(LineHistoryPtr& h, uint64_t edit);

// The withdrawn lines per market, whichever form holds them: `h.markets`,
// or `scratch` filled from the packed form.
const MarketList& history_markets(const LineHistory& h, MarketList& scratch);

}  // namespace oddsrelay
