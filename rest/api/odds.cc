// GET /v1/odds?ids= (4-element outcome tuples, from the per-event cache,
// with a weak ETag and 304) and POST /v1/odds (one market, 5-element
// tuples, a bare object; no ETag: a POST answer is not cached, and a
// matching If-None-Match on POST would have to be a 412).
#include <algorithm>

#include <rapidjson/document.h>

#include "rest/api/handlers.h"
#include "rest/errors.h"
#include "rest/json_views.h"
#include "rest/odds_etag.h"
#include "rest/params.h"

namespace oddsrelay::rest::api {

namespace {

void get_odds(Call& c) {
  std::vector<const EventEntry*> asked, events;
  if (!resolve_ids(c, split_ids(c.param("ids").value_or("")), asked)) return;
  for (const EventEntry* e : asked)
    if (e->listed() || !e->markets.empty()) events.push_back(e);  // else unknown to clients: absent
  // The tag is known before anything is encoded: a poller whose events did
  // not change costs a hash of 100 pairs and an empty answer.
  const std::string etag = odds_etag(c.st.etag_seed, events);
  const std::string extra = "ETag: " + etag + "\r\nCache-Control: no-cache\r\n";
  if (c.not_modified(etag)) return c.send_raw(304, {}, {}, extra);
  // Assembled from cached per-event fragments with plain appends: the JSON
  // writer would copy each fragment a character at a time. Event ids need no
  // escaping (they parsed as ids: letters, digits, '-', '_', '.').
  std::string& b = c.body;
  b += "{\"success\":true,\"data\":{";
  bool first = true;
  for (const EventEntry* e : events) {
    const std::string& odds = c.st.odds_cache.get(c.snap->events.find_shared(e->number));
    if (!first) b += ',';
    first = false;
    b += '"';
    b += e->key;
    b += "\":";
    b += odds;
  }
  b += "}}";
  c.send(200, extra);
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
