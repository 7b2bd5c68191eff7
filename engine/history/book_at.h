// The book of one event at a past log position, for GET /v1/odds?at=
// (docs/api.md "The book at a moment"): its markets rebuilt from the
// market logs (layout, `ls`, and each outcome's price, flags, `s`, `ts`:
// engine/history/market_log.h), in the engine's own Market form, so that
// the /v1/odds writer encodes them byte for byte as it encoded the state
// at that seq.
#pragma once

#include <cstdint>

#include "engine/core/market.h"
#include "engine/history/event_history.h"

namespace oddsrelay::history {

// The event's markets after the record at `seq` (empty: none then).
MarketList book_at(const EventHistory& h, uint64_t seq);

}  // namespace oddsrelay::history
