// RestApi: the REST API on top of the HTTP listener (it holds the
// RestShared every loop and request reaches through its Call). The router (rest/router.cc)
// holds the route table and the authentication order (route, method, key,
// source address, permission, rate limit) and CORS; each resource is
// answered in its own file under rest/api/. Runs on the REST loop thread and
// reads the engine's current snapshot; it never blocks the engine.
#pragma once

#include <string_view>
#include <vector>

#include "rest/http_server.h"
#include "rest/rest_inputs.h"
#include "rest/rest_shared.h"

namespace oddsrelay::rest {

// Every path the router answers (its route table), for the request
// metrics' labels (rest/request_metrics.cc) and the test that keeps the two
// in step.
std::vector<std::string_view> route_paths();

struct Call;

class RestApi : public HttpHandler {
 public:
  explicit RestApi(RestInputs ctx) : st_(std::move(ctx)) {}
  void handle(const http::Request& req, const Peer& peer, std::string& out, Takeover& takeover) override;
  void refuse(int status, const char* why, std::string& out) override;

  void set_server(const HttpServer* s) { st_.ctx.server = s; }

 private:
  // The answer, without the access line; the key it was answered for.
  const ApiKey* dispatch(const http::Request& req, const Peer& peer, std::string& out, Takeover& takeover);
  void dispatch(Call& c, const Peer& peer, Takeover& takeover);
  RestShared st_;
};

}  // namespace oddsrelay::rest
