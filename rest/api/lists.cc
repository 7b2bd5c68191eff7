// GET /v1/live and GET /v1/prematch: the listed events, by sport.
#include "rest/api/handlers.h"
#include "rest/errors.h"
#include "rest/json_views.h"
#include "rest/params.h"

namespace oddsrelay::rest::api {

namespace {

void list(Call& c, bool live) {
  std::optional<int32_t> sport;
  if (!sport_param(c, sport)) return;
  std::optional<uint32_t> limit;
  if (!live) {
    if (auto v = c.param("limit"); v && !v->empty()) {
      auto n = parse_int(*v);
      if (!n || *n < 1 || *n > 10000) return c.error(400, err::kBadLimit);
      limit = static_cast<uint32_t>(*n);
    }
  }
  auto groups = list_events(*c.snap, live, sport, limit);
  c.begin_success();
  if (live) {
    c.w.Key("ts");
    c.w.Int64(c.snap->last_live_at);
  }
  c.w.Key("sport");
  if (sport) c.w.Int(*sport);
  else c.w.Null();
  c.w.Key("data");
  if (sport) {
    write_events(c.w, groups.empty() ? std::vector<const EventEntry*>{} : groups[0].events);
  } else {
    c.w.StartObject();
    for (const auto& g : groups) {
      json::key(c.w, std::to_string(g.sport));
      write_events(c.w, g.events);
    }
    c.w.EndObject();
  }
  c.w.EndObject();
  c.send(200);
}

}  // namespace

void live(Call& c) { list(c, true); }
void prematch(Call& c) { list(c, false); }

}  // namespace oddsrelay::rest::api
