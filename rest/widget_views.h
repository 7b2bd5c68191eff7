// JSON behind the widget (docs/api.md "Widget"): the live events a
// tracker can show, and one match's tracker data (score, clock, period,
// match length, scoreline timeline, stats, and the key's widget settings).
#pragma once

#include <string_view>

#include "engine/core/snapshot.h"
#include "protocol/json_out.h"

namespace oddsrelay::rest {

// [{id, sport, home, away, score, clock, period, status}, ...] of live events.
void write_widget_events(json::Writer& w, const Snapshot& s);
// The tracker object of one listed event; `settings`: the key's raw JSON.
void write_widget_data(json::Writer& w, const EventEntry& e, std::string_view settings);

}  // namespace oddsrelay::rest
