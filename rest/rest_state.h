// What the REST handlers share across requests: the context from main, the
// limiters, the encoded-answer caches, the stream signer and the explorer's
// demo key. Built once by RestApi; handlers reach it through their Call.
#pragma once

#include <memory>
#include <string>

#include "rest/api_keys.h"
#include "rest/catalog_views.h"
#include "rest/handshake_limiter.h"
#include "rest/list_cache.h"
#include "rest/odds_cache.h"
#include "rest/rate_limiter.h"
#include "rest/rest_context.h"
#include "rest/settlement_views.h"
#include "rest/stream_addon.h"

namespace oddsrelay::rest {

struct RestState {
  explicit RestState(RestContext c);

  bool ready() const { return !ctx.ready || ctx.ready->load(std::memory_order_acquire); }

  RestContext ctx;
  RateLimiter limiter;
  HandshakeLimiter handshakes;
  OddsCache odds_cache;
  ListCache list_cache;
  std::unique_ptr<CatalogViews> catalog_views;  // null without a catalog
  SettlementCache settlements;
  StreamSigner stream_signer;
  uint64_t etag_seed = 0;    // drawn at start: /v1/odds tags of another run never match
  std::string explorer_key;  // the explorer page's demo key, new at every start
  ApiKey explorer_api_key;
};

}  // namespace oddsrelay::rest
