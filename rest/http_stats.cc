#include "rest/http_stats.h"

namespace oddsrelay::rest {

namespace {

using S = HttpStats;
using metrics::Type;
constexpr const char* kCloses = "oddsrelay_http_closes_total";
constexpr const char* kClosesHelp = "HTTP connections the server closed, by reason (docs/api.md \"Limits\").";
constexpr const char* kRefusals = "oddsrelay_http_connection_refusals_total";
constexpr const char* kRefusalsHelp = "HTTP requests refused (429, then closed) by a connection limit.";

constexpr metrics::Stat<S> kHttpStats[] = {
    {"unsent_bytes",
     &S::unsent_bytes,
     {"oddsrelay_http_unsent_bytes", Type::Gauge,
      "Bytes the HTTP connections owe their clients, shared answers counted by their size."}},
    {"read_pauses",
     &S::read_pauses,
     {"oddsrelay_http_read_pauses_total", Type::Counter,
      "Times a connection stopped being read because it owed more than --http-max-unsent."}},
    {"closed_unsent_total", &S::closed_unsent_total, {kCloses, Type::Counter, kClosesHelp, {"reason", "unsent_total"}}},
    {"closed_stalled", &S::closed_stalled, {kCloses, Type::Counter, kClosesHelp, {"reason", "stalled"}}},
    {"closed_idle", &S::closed_idle, {kCloses, Type::Counter, kClosesHelp, {"reason", "idle"}}},
    {"closed_header_timeout",
     &S::closed_header_timeout,
     {kCloses, Type::Counter, kClosesHelp, {"reason", "header_timeout"}}},
    {"refused_key_limit", &S::refused_key_limit, {kRefusals, Type::Counter, kRefusalsHelp, {"limit", "key"}}},
    {"refused_address_limit",
     &S::refused_address_limit,
     {kRefusals, Type::Counter, kRefusalsHelp, {"limit", "address"}}},
};

}  // namespace

metrics::StatTable<HttpStats> http_stats() { return kHttpStats; }

}  // namespace oddsrelay::rest
