// GET /v1/event?id=: one listed event's object, as the engine encoded it.
#include <rapidjson/document.h>

#include "protocol/api/errors.h"
#include "rest/api/handlers.h"
#include "rest/params.h"

namespace oddsrelay::rest::routes {

void event(Call& c) {
  auto id = c.param("id");
  if (!id || id->empty()) return c.error(400, err::kMissingId);
  std::optional<int32_t> sport;
  if (!sport_param(c, sport)) return;
  const EventEntry* e = lookup(*c.snap, *id);
  if (!e || !e->listed() || (sport && e->sport() != *sport)) return c.error(404, err::kEventNotFound);
  c.begin_success();
  c.w.Key("data");
  c.w.RawValue(e->info->json.data(), e->info->json.size(), rapidjson::kObjectType);
  c.w.EndObject();
  c.send(200);
}

// The event's own permission, by its state in this snapshot.
void declare_event(Call& c, Needs& n) {
  auto id = c.param("id");
  const EventEntry* e = id ? lookup(*c.snap, *id) : nullptr;
  if (e && e->listed()) n.add(event_data(e->live()));
}

}  // namespace oddsrelay::rest::routes
