// REST requests for /metrics, by route and status code: counted by the HTTP
// server after each answer (one relaxed add), from the path and the status
// line the handler wrote, so the routes themselves need no hook. Labels stay
// bounded: a path that is not one of the API's routes counts as "other",
// a status outside the codes the server sends as "other".
#pragma once

#include <cstdint>
#include <string_view>

#include "protocol/metrics/text_format.h"

namespace oddsrelay::rest {

// After a request was answered: `response` is what the handler appended
// (from its status line on); a takeover (WebSocket upgrade) counts as 101.
void count_response(std::string_view path, std::string_view response, bool takeover);
// A request the parser refused before it had a route.
void count_refused(int status);

// Answers so far with this route label and status (tests).
uint64_t requests_counted(std::string_view route, int status);

// oddsrelay_http_requests_total, then oddsrelay_rate_limited_total: the 429s
// of REST routes (the per-key request limit) and of /ws and /pt-ws (the
// handshake limit), with `stream_slot_refusals` (the relay's per-key stream
// limit) beside them.
void write_request_metrics(metrics::TextWriter& w, uint64_t stream_slot_refusals);

}  // namespace oddsrelay::rest
