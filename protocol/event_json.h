// Canonical encoding of the compact-key event object (docs/api.md "Event
// object"): the bytes every output (REST lists, /ws, /pt-ws evt: frames,
// the journal) serves for an event. Made once per event upsert.
#pragma once

#include "protocol/feed_record.h"
#include "protocol/json_out.h"

namespace oddsrelay::feed {

// Writes the event object with keys in spec order (c t g ts h a co map s ms
// live sport); c, t and ms only when present.
void write_event_object(json::Writer& w, const EventObject& e);

// Fills e.json from e's fields.
void finalize_event_json(EventObject& e);

}  // namespace oddsrelay::feed
