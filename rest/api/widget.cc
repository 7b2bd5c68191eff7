// The match tracker: GET /widget-events (live events), GET /widget-data
// (one event with the key's widget settings) and GET /widget (the page).
#include "protocol/api/errors.h"
#include "rest/api/handlers.h"
#include "rest/embedded_files.h"
#include "rest/params.h"
#include "rest/widget_views.h"

namespace oddsrelay::rest::routes {

void widget_events(Call& c) {
  c.begin_success();
  c.w.Key("data");
  write_widget_events(c.w, *c.snap);
  c.w.EndObject();
  c.send(200);
}

void widget_data(Call& c) {
  auto id = c.param("event_id");
  if (!id || id->empty()) return c.error(400, err::kMissingEventId);
  const EventEntry* e = lookup(*c.snap, *id);
  if (!e || !e->listed()) return c.error(404, err::kEventNotFound);
  c.begin_success();
  c.w.Key("data");
  write_widget_data(c.w, *e, c.key->widget_json);
  c.w.EndObject();
  c.send(200);
}

void widget_page(Call& c) {
  auto id = c.param("event_id");
  if (!id || id->empty()) return c.error(400, err::kMissingEventId);
  c.send_page(rest::widget_page());
}

}  // namespace oddsrelay::rest::routes
