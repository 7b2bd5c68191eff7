// RestShared: what the REST handlers share across requests and loops: the
// inputs from the node (RestInputs), the limiters (exact across loops: rest/rate_limiter.h), the stream
// signer and the explorer's demo key; and each loop's own answer caches
// (rest/loop_caches.h). Built once by RestApi; handlers reach it through
// their Call.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "protocol/api/api_keys.h"
#include "rest/handshake_limiter.h"
#include "rest/loop_caches.h"
#include "rest/rate_limiter.h"
#include "rest/rest_inputs.h"
#include "rest/stream_addon.h"

namespace oddsrelay::rest {

struct RestShared {
  explicit RestShared(RestInputs c);

  bool ready() const { return !ctx.ready || ctx.ready->load(std::memory_order_acquire); }

  RestInputs ctx;
  RateLimiter limiter;
  HandshakeLimiter handshakes;
  std::vector<std::unique_ptr<LoopCaches>> loops;  // one per REST loop (ctx.http_threads)
  bool has_catalog = false;
  StreamSigner stream_signer;
  uint64_t etag_seed = 0;    // drawn at start: /v1/odds tags of another run never match
  std::string explorer_key;  // the explorer page's demo key, new at every start
  ApiKey explorer_api_key;
};

}  // namespace oddsrelay::rest
