// A bucket's view digest (view_digest.h).
#include "relay/view_digest.h"

#include "engine/core/odds_digest.h"
#include "relay/stream_conn.h"

namespace oddsrelay::relay {

namespace {

// The terms one event adds to the view: its listing on an evt: channel the
// stream receives, and the outcomes of the markets its odds: channel
// carries (live events only, as the frames).
uint64_t event_digest(const EventEntry& e, const StreamFilter& f) {
  if (!e.listed() || !f.wants_sport(e.sport()) || !f.wants_event(e.number)) return 0;
  uint64_t sum = 0;
  if (f.evt && (f.classes & (e.live() ? kLiveEvents : kPrematchEvents))) sum += event_term(e.number);
  if (f.odds && e.live()) {
    if (f.markets.empty()) return sum + e.odds_digest;  // the event's kept sum
    for (const MarketRef& m : e.markets)
      if (f.wants_market(m.id)) sum += m->digest;
  }
  return sum;
}

}  // namespace

uint64_t view_digest(const Snapshot& s, const StreamFilter& filter) {
  uint64_t sum = 0;
  if (!filter.events.empty()) {  // a few named events: look them up
    for (uint64_t n : filter.events)
      if (const EventEntry* e = s.events.find(n)) sum += event_digest(*e, filter);
    return sum;
  }
  s.events.for_each([&](const EventEntry& e) { sum += event_digest(e, filter); });
  return sum;
}

}  // namespace oddsrelay::relay
