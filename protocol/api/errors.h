// Every error text a REST client can see, in one place: the fixed ones
// word for word, the others as documented in docs/api.md; and the two error
// bodies built from them (errors.cc).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace oddsrelay::api::err {

inline constexpr const char* kInvalidKey = "Invalid or disabled API key";  // docs/api.md "Errors", 401
inline constexpr const char* kEventNotFound = "Event not found";           // docs/api.md "Errors", 404
inline constexpr const char* kMissingIds = "Missing ids parameter";        // docs/api.md "Errors", 400
inline constexpr const char* kRateLimited = "Rate limit exceeded";         // docs/api.md "Errors", 429
inline constexpr const char* kInternal = "Internal server error";          // 500: a handler failed
inline constexpr const char* kStarting = "Service starting: the journal is being replayed";  // 503
// 503 from the history's routes while a restart reads its files back (engine/storage/history_recovery.h)
inline constexpr const char* kHistoryLoading = "Odds history starting: its files are being read back";
inline constexpr const char* kTooManyIds = "Too many ids: at most 100 per request";
inline constexpr const char* kRdstnAnswerTooLarge =
    "Answer too large: at most 16 MiB per request; ask for fewer keys";  // POST /rdstn (rest/rdstn_request.h)
inline constexpr const char* kMissingId = "Missing id parameter";
inline constexpr const char* kBadSport = "Invalid sport parameter: expected a sport id";
inline constexpr const char* kBadLimit = "Invalid limit parameter: expected an integer from 1 to 10000";
inline constexpr const char* kNotFound = "Not found";
inline constexpr const char* kMethodNotAllowed = "Method not allowed";
inline constexpr const char* kIpNotAllowed = "Source address not allowed for this API key";
inline constexpr const char* kOriginNotAllowed = "Origin not allowed for this API key";  // 403, allow_origins
inline constexpr const char* kBadOddsBody =
    "Invalid body: expected {\"sport\": <int>, \"market\": <int>, \"events\": [<event id>, ...]}";
// GET /v1/odds/history (docs/api.md "Odds history"): 400s naming the parameter
inline constexpr const char* kBadHistoryMarket = "Invalid market parameter: expected a market id";
inline constexpr const char* kBadHistoryOutcome = "Invalid outcome parameter: expected an outcome id";
inline constexpr const char* kBadHistoryFrom = "Invalid from parameter: expected unix ms";
inline constexpr const char* kBadHistoryTo = "Invalid to parameter: expected unix ms";
inline constexpr const char* kHistoryFromAfterTo = "Invalid from parameter: after to";
inline constexpr const char* kBadHistoryInterval =
    "Invalid interval parameter: expected raw, 1s, 10s, 1m, 5m, 15m or 1h";
inline constexpr const char* kBadHistoryFormat = "Invalid format parameter: expected json or csv";
inline constexpr const char* kBadOddsAt = "Invalid at parameter: expected unix ms";  // GET /v1/odds?at=
inline constexpr const char* kOddsAtNoHistory = "Invalid at parameter: the odds history is off (--history off)";
inline constexpr const char* kHorizonExceeded = "horizon_exceeded";  // with held_from
inline constexpr const char* kGroupsNeedSport = "groups=1 needs a sport parameter: groups are sport-scoped";

inline constexpr const char* kNoStreamCoverage = "No stream coverage for this event";
inline constexpr const char* kBadStreamSignature = "Invalid stream signature";
inline constexpr const char* kStreamExpired = "Stream URL expired";

inline constexpr const char* kMissingEventId = "Missing event_id parameter";
inline constexpr const char* kMissingEvent = "Missing event parameter";
// The PROXY protocol line at the start of a connection (400, then closed)
inline constexpr const char* kProxyLineUntrusted = "PROXY protocol header from a peer outside --trust-proxy";
inline constexpr const char* kBadProxyLine = "Malformed PROXY protocol header";

inline constexpr const char* kExplorerKeyOrigin = "This demo key only works from the explorer page of this server";

// WebSocket handshakes and messages
inline constexpr const char* kTooManyStreams = "Too many WebSocket connections for this API key";  // docs/api.md
inline constexpr const char* kTooManyHandshakes = "Too many stream handshakes for this API key";   // 429
// HTTP connections (rest/conn_limits.h): 429, then the connection closes
inline constexpr const char* kTooManyHttpConnections = "Too many HTTP connections for this API key";
inline constexpr const char* kTooManyAddressConnections = "Too many HTTP connections from this address";
inline constexpr const char* kUpgradeRequired = "WebSocket upgrade required: send Upgrade: websocket";
inline constexpr const char* kBadWsVersion = "Unsupported WebSocket version: use 13";
inline constexpr const char* kBadWsKey = "Missing or invalid Sec-WebSocket-Key";
inline constexpr const char* kBadWsConnection = "Connection header must include Upgrade";
inline constexpr const char* kBadProtocol = "Unsupported protocol parameter: use protocol=v2";
inline constexpr const char* kBadSports = "Invalid sports parameter: expected sport ids separated by commas";
inline constexpr const char* kBadEvents =
    "Invalid events parameter: expected at most 100 event ids separated by commas";
inline constexpr const char* kBadConflate = "Invalid conflate_ms parameter: expected milliseconds from 0 to 60000";
inline constexpr const char* kBadVerify = "Invalid verify parameter: expected 0 or 1";
inline constexpr const char* kBadMarkets =
    "Invalid markets parameter: expected at most 64 market ids separated by commas";

// "Invalid <name> parameter: expected 0 or 1"
std::string bad_flag(std::string_view name);
// A body past a limit of protocol/json_in.h (docs/api.md "Limits"):
// "Invalid body: nested deeper than 64 levels", "Invalid body: duplicate key ...".
std::string bad_body(std::string_view why);

// {"error": msg}
std::string body(std::string_view msg);
// The 429 body: {"error", "limit", "window": "<n>s", "retry_after"}.
std::string rate_limited(std::string_view msg, uint32_t limit, int window_s, int retry_after);

}  // namespace oddsrelay::api::err
