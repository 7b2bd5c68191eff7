// The digest of what one bucket of /pt-ws streams holds (verify=1,
// docs/api.md "State digest"): the events its evt: channels list and the
// outcomes its odds: channels carry, in the state at a group's seq, after
// its filter. Computed once per bucket and group (pt_stream.cc), never per
// stream; a pass over the admitted events adding each one's sum the engine
// kept (EventEntry::odds_digest; with markets=, each admitted market's,
// Market::digest), never hashing an outcome.
#pragma once

#include <cstdint>

#include "engine/core/snapshot.h"
#include "relay/stream_filter.h"

namespace oddsrelay::relay {

uint64_t view_digest(const Snapshot& s, const StreamFilter& filter);

}  // namespace oddsrelay::relay
