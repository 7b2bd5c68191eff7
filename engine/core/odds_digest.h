// The client-visible digest of odds and event lists (docs/api.md, "State
// digest"): what a /pt-ws stream with verify=1 and GET /v1/odds?digest=1
// send so that a client can prove its replica equals the server's state.
// Unlike state_digest.h (a canonical dump of everything the engine keeps,
// for the server's own tests), this covers only what a client holds, and is
// a sum of one hash per outcome and per listed event: a client adds and
// subtracts terms as frames replace markets, and the server keeps each
// market's sum in the market itself (Market::digest, set where the market
// is built) and each event's in its entry (EventEntry::odds_digest), so a
// view's digest is a pass over its events, never over their outcomes.
//
// Terms, each XXH64 with seed 0 of the UTF-8 text (integers in decimal, as
// the frames carry them):
//   outcome: "<event number>|<market id>|<line key>|<outcome id>|<price>|<flags>|<line s>"
//   event:   "e|<event number>"
// The digest is their sum modulo 2^64; an empty rung has no outcome and adds
// nothing.
#pragma once

#include <cstdint>

#include "engine/core/market.h"
#include "protocol/digest_terms.h"

namespace oddsrelay {

// outcome_term, event_term and digest_hex: protocol/digest_terms.h, shared
// with the C++ client.

// The sum of the terms of every outcome of `m` under event `event`.
uint64_t market_digest(uint64_t event, const Market& m);

}  // namespace oddsrelay
