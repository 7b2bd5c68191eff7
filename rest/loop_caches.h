// LoopCaches: the encoded-answer caches of one REST loop (--http-threads): each loop
// owns its own, so a request never takes a lock to read or fill them, at
// the price of each loop encoding a changed event once for itself (docs/api.md
// "Threads"). The limiters, keys and snapshots are shared (rest/rest_api.h).
#pragma once

#include <memory>

#include "rest/catalog_views.h"
#include "rest/list_cache.h"
#include "rest/odds_cache.h"
#include "rest/settlement_views.h"

namespace oddsrelay::rest {

struct LoopCaches {
  LoopCaches(const CatalogPtr& catalog, const Published<Catalog>* catalog_updates) {
    if (catalog) catalog_views = std::make_unique<CatalogViews>(catalog, catalog_updates);
  }
  OddsCache odds;
  ListCache lists;
  SettlementCache settlements;
  std::unique_ptr<CatalogViews> catalog_views;  // null without a catalog
};

}  // namespace oddsrelay::rest
