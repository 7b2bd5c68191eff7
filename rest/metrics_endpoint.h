// GET /metrics: the registry (protocol/metrics/registry.h) in the Prometheus
// text format. Served on the main listener as a keyed route (any valid key,
// like /v1/status), or, with --metrics-listen, by MetricsHandler on a
// listener of its own without a key (docs/metrics.md says which to choose).
#pragma once

#include <string>

#include "protocol/metrics/registry.h"
#include "rest/http_server.h"

namespace oddsrelay::rest {

// Appends the 200 answer (gzip when the client accepts it, as Prometheus does).
void append_metrics(const metrics::Registry& registry, const http::Request& req, std::string& out);

// The metrics listener: GET /metrics and nothing else (404; 405 for other
// methods), no key, so bind it where only the monitoring can reach it.
class MetricsHandler : public HttpHandler {
 public:
  explicit MetricsHandler(const metrics::Registry& registry) : registry_(registry) {}
  void handle(const http::Request& req, Peer& peer, net::OutQueue& out, Takeover& takeover) override;
  void refuse(int status, const char* why, std::string& out) override;

 private:
  const metrics::Registry& registry_;
};

}  // namespace oddsrelay::rest
