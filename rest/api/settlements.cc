// GET /v1/settlements?ids= (aliases event_id, fixture_id), include_inplay,
// lang: each event's settlement record from the settlement cache.
#include <unordered_set>

#include "protocol/api/errors.h"
#include "protocol/event_id.h"
#include "rest/api/handlers.h"
#include "rest/params.h"

namespace oddsrelay::rest::routes {

void settlements(Call& c) {
  CatalogViews& views = *c.cache.catalog_views;
  std::optional<std::string> ids;
  for (const char* name : {"ids", "event_id", "fixture_id"})
    if ((ids = c.param(name)) && !ids->empty()) break;
  bool inplay = false, lang_given = false;
  if (!flag_param(c, "include_inplay", inplay)) return;
  const std::vector<std::string> list = split_ids(ids.value_or(""));
  if (list.empty()) return c.error(400, err::kMissingIds);
  if (list.size() > kMaxIds) return c.error(400, err::kTooManyIds);
  const int lang = lang_param(c, views.catalog(), lang_given);
  std::string& b = c.body;
  b += "{\"success\":true,\"version\":\"v1\",\"policy_url\":\"/docs/settlement\",\"data\":{";
  std::vector<std::string_view> missing;
  std::unordered_set<uint64_t> seen;
  bool first = true;
  for (const std::string& id : list) {
    ParsedId p = parse_event_id(id);
    auto e = p.ok() ? c.snap->events.find_shared(p.number) : nullptr;
    if (!e || (!e->score && e->markets.empty() && !e->listed())) {
      missing.push_back(id);
      continue;
    }
    if (!seen.insert(e->number).second) continue;
    if (!first) b += ',';
    first = false;
    b += '"';
    b += e->key;  // ids that parsed need no escaping
    b += "\":";
    b += c.cache.settlements.get(e, views.catalog(), lang, inplay);
  }
  b += "},\"not_found\":[";
  for (size_t i = 0; i < missing.size(); ++i) {
    if (i) b += ',';
    std::string esc;
    json::StringSink sink(esc);
    json::Writer w(sink);
    json::str(w, missing[i]);
    b += esc;
  }
  b += "]}";
  c.send(200);
}

}  // namespace oddsrelay::rest::routes
