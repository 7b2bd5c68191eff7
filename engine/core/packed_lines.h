// The withdrawn lines of an event that has ended, packed. Once an event is
// past full time its line history (engine/core/line_history.h) never
// changes again, yet it is kept for as long as the event is retained and
// settled from: in the Market form every line costs 40 bytes and every
// outcome 24, nearly all of them high zero bytes of ids, prices and
// timestamps close to each other. Packed as varints, each timestamp as its
// distance to the one before it, a line and its outcomes take about a third
// (docs/architecture.md, "Line history").
//
// Exact: unpacking gives back every field of every line and outcome (the
// state digest reads the unpacked form), with outcomes in line order.
// Readers unpack on demand (settlement, the digest, a snapshot file); the
// engine packs once, at the first `ended` record.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/core/market.h"

namespace oddsrelay {

using PackedLines = std::vector<uint8_t>;

// The markets' lines and outcomes, in order. The result's capacity is its
// size: it is kept as long as the event.
PackedLines pack_lines(const MarketList& markets);
// The markets `pack_lines` was given, each a fresh Market.
MarketList unpack_lines(const PackedLines& packed);

}  // namespace oddsrelay
