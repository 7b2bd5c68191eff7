// HttpStats: the HTTP listener's counters beside its connection and request
// counts (rest/http_server.h): the unsent bytes it holds for its clients,
// the connections it closed and why, the connections the per-key and
// per-address limits refused (rest/conn_limits.h). One table
// (protocol/metrics/stat_table.h) writes them into /v1/status's "http"
// object and /metrics, so the two cannot drift apart (docs/metrics.md).
#pragma once

#include <atomic>
#include <cstdint>

#include "protocol/metrics/stat_table.h"

namespace oddsrelay::rest {

struct HttpStats {
  // Every connection's unsent bytes, shared bodies counted by their size
  // (the measure of --http-max-unsent-total); a gauge.
  std::atomic<uint64_t> unsent_bytes{0};
  // Reads paused because a connection owed more than --http-max-unsent
  // (its pipelined requests wait unread).
  std::atomic<uint64_t> read_pauses{0};
  // Connections closed, by reason (HttpClose in rest/http_server.cc).
  std::atomic<uint64_t> closed_unsent_total{0};    // the process over --http-max-unsent-total: the stalest first
  std::atomic<uint64_t> closed_stalled{0};         // bytes owed, nothing read or written for --idle-timeout
  std::atomic<uint64_t> closed_idle{0};            // keep-alive, idle for --idle-timeout
  std::atomic<uint64_t> closed_header_timeout{0};  // a request not complete within --header-timeout
  // Requests refused (429, then closed) by the connection limits.
  std::atomic<uint64_t> refused_key_limit{0};      // the key's http_connections were held
  std::atomic<uint64_t> refused_address_limit{0};  // keyless routes: --http-connections-per-address
};

metrics::StatTable<HttpStats> http_stats();

}  // namespace oddsrelay::rest
