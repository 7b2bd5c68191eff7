// RestApi: the REST API of this process, one for every loop and request. It
// is the handler on top of the HTTP listener and holds what every loop and
// request shares: the node's inputs (rest/rest_inputs.h), the limiters (exact
// across loops: rest/rate_limiter.h), the stream signer, the explorer's demo
// key and each loop's own answer caches (rest/loop_caches.h). A request
// reaches it through its Call (rest/call.h). The levels, widest first:
// RestInputs (given by the node), RestApi (the process), LoopCaches (one
// loop), Call (one request).
//
// The router (rest/router.cc) holds the route table and the authentication
// order (route, method, key, source address, permission, rate limit) and
// CORS; each resource is answered in its own file under rest/api/. Runs on
// the REST loop threads and reads the engine's current snapshot; it never
// blocks the engine.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/api/api_keys.h"
#include "rest/conn_limits.h"
#include "rest/handshake_limiter.h"
#include "rest/http_server.h"
#include "rest/loop_caches.h"
#include "rest/rate_limiter.h"
#include "rest/rest_inputs.h"
#include "rest/stream_addon.h"
#include "rest/vocabulary.h"

namespace oddsrelay::rest {

// Every path the router answers (its route table), for the request
// metrics' labels (rest/request_metrics.cc) and the test that keeps the two
// in step.
std::vector<std::string_view> route_paths();

struct Call;

class RestApi : public HttpHandler {
 public:
  explicit RestApi(RestInputs in);
  void handle(const http::Request& req, Peer& peer, net::OutQueue& out, Takeover& takeover) override;
  void refuse(int status, const char* why, std::string& out) override;

  void set_server(const HttpServer* s) {
    inputs.server = s;
    stats = s ? &s->stats() : &own_stats;
  }
  bool ready() const { return !inputs.ready || inputs.ready->load(std::memory_order_acquire); }

  RestInputs inputs;
  RateLimiter limiter;
  HandshakeLimiter handshakes;
  ConnLimits conn_limits;                          // HTTP connections per key and per address
  HttpStats own_stats;                             // without a server (tests)
  HttpStats* stats = &own_stats;                   // the server's: the limits' refusals are counted there
  std::vector<std::unique_ptr<LoopCaches>> loops;  // one per REST loop (inputs.http_threads)
  bool has_catalog = false;
  StreamSigner stream_signer;
  uint64_t etag_seed = 0;    // drawn at start: /v1/odds tags of another run never match
  std::string explorer_key;  // the explorer page's demo key, new at every start
  ApiKey explorer_api_key;

 private:
  // The answer, without the access line; the key it was answered for.
  const ApiKey* dispatch(const http::Request& req, Peer& peer, net::OutQueue& out, Takeover& takeover);
  void dispatch(Call& c, Peer& peer, Takeover& takeover);
  // The connection limits' verdict for an answer: false once refused (429, closing).
  bool admit_connection(Call& c, Peer& peer, const ApiKey* key);
};

}  // namespace oddsrelay::rest
