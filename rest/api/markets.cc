// GET /v1/markets and GET /v1/market-groups: the catalog's encodings, built
// once per parameter set (rest/catalog_views.h), with ETag and 304.
#include "protocol/api/errors.h"
#include "rest/api/handlers.h"
#include "rest/params.h"

namespace oddsrelay::rest::routes {

namespace {
void send_view(Call& c, const CatalogViews::Encoded& e) { c.send_cached(e.body, e.gz, e.etag); }
}  // namespace

void markets(Call& c) {
  CatalogViews& views = *c.cache.catalog_views;
  std::optional<int32_t> sport;
  bool nested = false, groups = false, lang_given = false;
  if (!sport_param(c, sport) || !flag_param(c, "nested", nested) || !flag_param(c, "groups", groups)) return;
  if (groups && !sport) return c.error(400, err::kGroupsNeedSport);
  int lang = lang_param(c, views.catalog(), lang_given);
  send_view(c, views.markets(sport, nested, groups, lang));
}

void market_groups(Call& c) {
  CatalogViews& views = *c.cache.catalog_views;
  std::optional<int32_t> sport;
  bool lang_given = false;
  if (!sport_param(c, sport)) return;
  int lang = lang_param(c, views.catalog(), lang_given);
  send_view(c, views.market_groups(sport, lang, lang_given));
}

}  // namespace oddsrelay::rest::routes
