// JSON encodings of engine state in the shapes of docs/api.md: event lists,
// odds (GET 4-element and POST 5-element outcome tuples), score records.
// Each reads one snapshot, so a response never mixes two versions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/snapshot.h"
#include "protocol/json_out.h"

namespace oddsrelay::views {

// Listed events, live or pre-match, optionally of one sport, grouped by
// sport and ordered by tournament priority, then kickoff, then number; at
// most `limit` per sport when given.
struct EventGroup {
  int32_t sport;
  std::vector<const EventEntry*> events;
};
std::vector<EventGroup> list_events(const Snapshot& s, bool live, std::optional<int32_t> sport,
                                    std::optional<uint32_t> limit);

// {<event id>: <event object>, ...}
void write_events(json::Writer& w, const std::vector<const EventEntry*>& events);

enum class OddsForm { Get, Post };
// {<line key>: {<outcome id>: [...], "s": s, "ls": ls}}: one market's lines,
// appended to `out` (encoders that write their own bytes, like the relay's
// odds frames) or as the next value of `w`.
void append_market(std::string& out, const Market& m, OddsForm form);
void write_market(json::Writer& w, const Market& m, OddsForm form);
// {<market id>: {<line key>: {<outcome id>: [...], "s": s, "ls": ls}}}; an
// empty rung holds only "ls". `only_market` restricts to one market.
void write_odds(json::Writer& w, const EventEntry& e, OddsForm form, std::optional<uint32_t> only_market = {});

// The score record (docs/api.md "Score record"); false (nothing written) when e has no score.
bool write_score(json::Writer& w, const EventEntry& e);

}  // namespace oddsrelay::views
