#include "rest/request_metrics.h"

#include <array>
#include <string>

#include "protocol/metrics/instruments.h"

namespace oddsrelay::rest {

namespace {

// The route templates of the API (the router's table, rest/router.cc, which
// includes /metrics and the public pages; RequestMetrics.EveryRouteHasItsOwnLabel
// keeps the two in step): a path is its own template, queries are not part
// of it.
// The last entry, "other", takes every path not listed.
constexpr std::string_view kRoutes[] = {"/v1/sports",
                                        "/v1/live",
                                        "/v1/prematch",
                                        "/v1/event",
                                        "/v1/odds",
                                        "/v1/scores",
                                        "/v1/status",
                                        "/v1/settlements",
                                        "/rdstn",
                                        "/v1/stream",
                                        "/widget-events",
                                        "/widget-data",
                                        "/widget",
                                        "/v1/markets",
                                        "/v1/market-groups",
                                        "/ws",
                                        "/pt-ws",
                                        "/pt-sse",
                                        "/docs/explore",
                                        "/docs/settlement",
                                        "/openapi.json",
                                        "/stream/play",
                                        "/healthz",
                                        "/metrics",
                                        "/v1/odds/history",
                                        "/js/oddsclient.mjs",
                                        "other"};
constexpr size_t kRouteCount = std::size(kRoutes);

// Every status the server sends; the last entry, 0, is "other".
constexpr int kCodes[] = {101, 200, 204, 304, 400, 401, 403, 404, 405, 411, 413, 414, 426, 429, 431, 500, 503, 505, 0};
constexpr size_t kCodeCount = std::size(kCodes);

std::array<std::array<metrics::Counter, kCodeCount>, kRouteCount> counts;

size_t route_index(std::string_view path) {
  for (size_t i = 0; i + 1 < kRouteCount; ++i)
    if (kRoutes[i] == path) return i;
  return kRouteCount - 1;
}

size_t code_index(int status) {
  for (size_t i = 0; i + 1 < kCodeCount; ++i)
    if (kCodes[i] == status) return i;
  return kCodeCount - 1;
}

// "HTTP/1.1 200 ..." -> 200; 0 when the answer is not a status line.
int status_of(std::string_view response) {
  if (response.size() < 12 || response.substr(0, 9) != "HTTP/1.1 ") return 0;
  int s = 0;
  for (size_t i = 9; i < 12; ++i) {
    if (response[i] < '0' || response[i] > '9') return 0;
    s = s * 10 + (response[i] - '0');
  }
  return s;
}

bool is_stream(size_t route) {
  return kRoutes[route] == "/ws" || kRoutes[route] == "/pt-ws" || kRoutes[route] == "/pt-sse";
}

}  // namespace

void count_response(std::string_view path, std::string_view response, bool takeover) {
  counts[route_index(path)][code_index(takeover ? 101 : status_of(response))].add();
}

void count_refused(int status) { counts[kRouteCount - 1][code_index(status)].add(); }

uint64_t requests_counted(std::string_view route, int status) {
  return counts[route_index(route)][code_index(status)].value();
}

void write_request_metrics(metrics::TextWriter& w, uint64_t stream_slot_refusals) {
  using metrics::Type;
  w.family("oddsrelay_http_requests_total", Type::Counter,
           "HTTP requests answered, by route template (other: any path not a route) and status code.");
  uint64_t limited_requests = 0, limited_handshakes = 0;
  const size_t c429 = code_index(429);
  for (size_t r = 0; r < kRouteCount; ++r) {
    for (size_t c = 0; c < kCodeCount; ++c) {
      const uint64_t v = counts[r][c].value();
      if (v == 0) continue;  // only pairs that happened: most never do
      const std::string code = kCodes[c] ? std::to_string(kCodes[c]) : std::string("other");
      w.sample("oddsrelay_http_requests_total", {{"route", kRoutes[r]}, {"code", code}}, v);
    }
    (is_stream(r) ? limited_handshakes : limited_requests) += counts[r][c429].value();
  }
  w.family("oddsrelay_rate_limited_total", Type::Counter,
           "Refusals by a limit: requests (a key's REST rate, 429), handshakes (a key's /ws and /pt-ws "
           "handshake rate, 429), stream_slots (a key's concurrent streams, closed 1008).");
  w.sample("oddsrelay_rate_limited_total", {{"limit", "requests"}}, limited_requests);
  w.sample("oddsrelay_rate_limited_total", {{"limit", "handshakes"}}, limited_handshakes);
  w.sample("oddsrelay_rate_limited_total", {{"limit", "stream_slots"}}, stream_slot_refusals);
}

}  // namespace oddsrelay::rest
