// The REST resources, one file each under rest/api/, as the router
// (rest/router.cc) calls them: after the route, method, key, source address,
// permission and rate limit are settled, with the snapshot loaded. Each
// answers through its Call (rest/call.h) and reads shared state from
// Call::st. A route whose answer carries data that depends on the request
// also has a declare_* function the router calls before the permission check.
#pragma once

#include "protocol/api/access.h"
#include "rest/call.h"
#include "rest/vocabulary.h"

namespace oddsrelay::rest::routes {

void sports(Call& c);    // GET /v1/sports
void live(Call& c);      // GET /v1/live
void prematch(Call& c);  // GET /v1/prematch
void event(Call& c);     // GET /v1/event
void declare_event(Call& c, Needs& n);
void odds(Call& c);                          // GET and POST /v1/odds
void odds_history(Call& c);                  // GET /v1/odds/history
void odds_at(Call& c, std::string_view at);  // GET /v1/odds?at=: called by odds()
void scores(Call& c);                        // GET /v1/scores
void settlements(Call& c);                   // GET /v1/settlements
void markets(Call& c);                       // GET /v1/markets
void market_groups(Call& c);                 // GET /v1/market-groups
void status(Call& c);                        // GET /v1/status
void metrics(Call& c);                       // GET /metrics (not with --metrics-listen)
void stream_url(Call& c);                    // GET /v1/stream
void widget_events(Call& c);                 // GET /widget-events
void widget_data(Call& c);                   // GET /widget-data
void widget_page(Call& c);                   // GET /widget
void rdstn(Call& c);                         // POST /rdstn
void declare_rdstn(Call& c, Needs& n);

// Routes without a key: the URL or the page carries its own credential.
void healthz(Call& c);            // GET /healthz
void stream_play(Call& c);        // GET /stream/play
void settlement_policy(Call& c);  // GET, HEAD /docs/settlement
void explorer(Call& c);           // GET /docs/explore
void openapi(Call& c);            // GET, HEAD /openapi.json
void oddsclient_module(Call& c);  // GET, HEAD /js/oddsclient.mjs

}  // namespace oddsrelay::rest::routes
