// GET /v1/scores[?ids=][&sport=]: score records, of the named events or of
// every listed event with one.
#include <algorithm>

#include "engine/views/json_views.h"
#include "rest/api/handlers.h"
#include "rest/params.h"

namespace oddsrelay::rest::routes {

void scores(Call& c) {
  std::optional<int32_t> sport;
  if (!sport_param(c, sport)) return;
  std::vector<const EventEntry*> events;
  if (auto ids = c.param("ids"); ids && !ids->empty()) {
    if (!resolve_ids(c, split_ids(*ids), events)) return;
  } else {
    c.snap->events.for_each([&](const EventEntry& e) {
      if (e.listed() && e.score) events.push_back(&e);
    });
    std::sort(events.begin(), events.end(), [](auto* a, auto* b) { return a->number < b->number; });
  }
  c.begin_success();
  c.w.Key("data");
  c.w.StartObject();
  for (const EventEntry* e : events) {
    if (!e->score || (sport && e->sport() != *sport)) continue;
    json::key(c.w, e->key);
    write_score(c.w, *e);
  }
  c.w.EndObject();
  c.w.EndObject();
  c.send(200);
}

}  // namespace oddsrelay::rest::routes
