// GET /v1/odds?ids= (4-element outcome tuples, from the per-event cache)
// and POST /v1/odds (one market, 5-element tuples, a bare object).
#include <algorithm>

#include <rapidjson/document.h>

#include "rest/api/handlers.h"
#include "rest/errors.h"
#include "rest/json_views.h"
#include "rest/params.h"

namespace oddsrelay::rest::api {

namespace {

void get_odds(Call& c) {
  std::vector<const EventEntry*> events;
  if (!resolve_ids(c, split_ids(c.param("ids").value_or("")), events)) return;
  // Assembled from cached per-event fragments with plain appends: the JSON
  // writer would copy each fragment a character at a time. Event ids need no
  // escaping (they parsed as ids: letters, digits, '-', '_', '.').
  std::string& b = c.body;
  b += "{\"success\":true,\"data\":{";
  bool first = true;
  for (const EventEntry* e : events) {
    if (!e->listed() && e->markets.empty()) continue;  // unknown to clients: absent
    const std::string& odds = c.st.odds_cache.get(c.snap->events.find_shared(e->number));
    if (!first) b += ',';
    first = false;
    b += '"';
    b += e->key;
    b += "\":";
    b += odds;
  }
  b += "}}";
  c.send(200);
}

void post_odds(Call& c) {
  rapidjson::Document d;
  d.Parse(c.req.body.data(), c.req.body.size());
  if (d.HasParseError() || !d.IsObject() || !d.HasMember("market") || !d["market"].IsUint() || !d.HasMember("events") ||
      !d["events"].IsArray() || (d.HasMember("sport") && !d["sport"].IsInt()))
    return c.error(400, err::kBadOddsBody);
  std::vector<std::string> ids;
  for (const auto& v : d["events"].GetArray()) {
    if (!v.IsString()) return c.error(400, err::kBadOddsBody);
    std::string_view id(v.GetString(), v.GetStringLength());
    // A repeated id is counted once, as on GET: it does not use up the limit.
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.emplace_back(id);
    if (ids.size() > kMaxIds) break;  // already too many: resolve_ids refuses it
  }
  std::vector<const EventEntry*> events;
  if (!resolve_ids(c, ids, events)) return;
  std::optional<int32_t> sport;
  if (d.HasMember("sport")) sport = d["sport"].GetInt();
  const uint32_t market = d["market"].GetUint();
  c.w.StartObject();  // a bare object, as the interface shows
  for (const EventEntry* e : events) {
    if ((sport && e->listed() && e->sport() != *sport) || !e->market(market)) continue;
    json::key(c.w, e->key);
    write_odds(c.w, *e, OddsForm::Post, market);
  }
  c.w.EndObject();
  c.send(200);
}

}  // namespace

void odds(Call& c) { c.req.method == "POST" ? post_odds(c) : get_odds(c); }

}  // namespace oddsrelay::rest::api
