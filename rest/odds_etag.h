// The weak ETag of a GET /v1/odds answer (docs/api.md "Conditional
// requests"). The answer is a function of which events it holds, in which
// order, and of each one's entry version; an entry never changes once
// published and a new version is created in a later batch, so (number,
// batch) names its content. The seed is drawn at start: a tag from before a
// restart never matches, since batch numbers begin again.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/event_entry.h"

namespace oddsrelay::rest {

// W/"<16 hex>" over the seed and each event's (number, edit), in order.
std::string odds_etag(uint64_t seed, const std::vector<const EventEntry*>& events);

}  // namespace oddsrelay::rest
