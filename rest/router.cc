// The REST router: the route table, then one pass per request through the
// authentication order of docs/api.md (route, method, readiness, key,
// source address, origin, permission, rate limit) before the route's handler in
// rest/api/ runs. Stream upgrades (/ws, /pt-ws) pass the same checks and
// are then handed to the relay. A new route is one line in kRoutes.
#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <chrono>
#include <cstring>
#include <optional>

#include "protocol/api/access.h"
#include "protocol/api/access_log.h"
#include "protocol/api/errors.h"
#include "protocol/api/origins.h"
#include "protocol/clock.h"
#include "protocol/http_response.h"
#include "rest/api/handlers.h"
#include "rest/call.h"
#include "rest/client_address.h"
#include "rest/rest_api.h"

namespace oddsrelay::rest {

namespace {

// What a route needs besides a key and a permission.
enum RouteFlags : uint8_t {
  kPublic = 1 << 0,   // no key: the page or the URL carries its own credential
  kStream = 1 << 1,   // a WebSocket upgrade, handed to the relay
  kCatalog = 1 << 2,  // answered from the market catalog
  kHistory = 1 << 3,  // answered from the odds history (--history)
};

struct Route {
  const char* path;
  const char* methods;  // for Allow
  Needs needs;          // the data every answer of the route carries (protocol/api/access.h)
  uint8_t flags;
  void (*answer)(Call&);  // null for streams
  // The data this request's answer carries beyond `needs`, when that
  // depends on the request (an event's state, the /rdstn commands).
  void (*declare)(Call&, Needs&) = nullptr;
};

constexpr Needs need(Data d) {
  Needs n;
  n.add(d);
  return n;
}
constexpr Needs any_of(std::initializer_list<Data> ds) {
  Needs n;
  for (Data d : ds) n.add_any(d);
  return n;
}
constexpr Needs kNothing{};

constexpr Route kRoutes[] = {
    {"/v1/sports", "GET, OPTIONS", kNothing, 0, routes::sports},  // counts only
    {"/v1/live", "GET, OPTIONS", need(Data::LiveEvent), 0, routes::live},
    {"/v1/prematch", "GET, OPTIONS", need(Data::PrematchEvent), 0, routes::prematch},
    {"/v1/event", "GET, OPTIONS", any_of({Data::LiveEvent, Data::PrematchEvent}), 0, routes::event,
     routes::declare_event},
    {"/v1/odds", "GET, POST, OPTIONS", need(Data::Price), 0, routes::odds},
    {"/v1/odds/history", "GET, OPTIONS", need(Data::Price), kHistory, routes::odds_history},
    {"/v1/scores", "GET, OPTIONS", need(Data::Score), 0, routes::scores},
    {"/v1/status", "GET, OPTIONS", kNothing, 0, routes::status},
    {"/metrics", "GET", kNothing, 0, routes::metrics},  // like /v1/status, for Prometheus (docs/metrics.md)
    {"/v1/settlements", "GET, OPTIONS", need(Data::Settlement), kCatalog, routes::settlements},
    // The legacy event-list format: a key sees some events or has no use
    // for it; then each command needs what its answer carries.
    {"/rdstn", "POST, OPTIONS", any_of({Data::LiveEvent, Data::PrematchEvent}), 0, routes::rdstn,
     routes::declare_rdstn},
    {"/v1/stream", "GET, OPTIONS", need(Data::Stream), 0, routes::stream_url},
    {"/widget-events", "GET, OPTIONS", need(Data::Widget), 0, routes::widget_events},
    {"/widget-data", "GET, OPTIONS", need(Data::Widget), 0, routes::widget_data},
    {"/widget", "GET", need(Data::Widget), 0, routes::widget_page},
    {"/v1/markets", "GET, OPTIONS", need(Data::Dictionary), kCatalog, routes::markets},
    {"/v1/market-groups", "GET, OPTIONS", need(Data::Dictionary), kCatalog, routes::market_groups},
    // Streams carry several kinds; the relay sends each frame only to keys
    // whose permissions admit it (relay/pt_stream.cc, StreamFilter::admits), by the same table.
    {"/ws", "GET", need(Data::LiveEvent), kStream, nullptr},
    {"/pt-ws", "GET", any_of({Data::LiveEvent, Data::PrematchEvent, Data::Price}), kStream, nullptr},
    {"/pt-sse", "GET", any_of({Data::LiveEvent, Data::PrematchEvent, Data::Price}), kStream, nullptr},
    {"/docs/explore", "GET", kNothing, kPublic, routes::explorer},
    {"/docs/settlement", "GET, HEAD", kNothing, kPublic, routes::settlement_policy},
    {"/openapi.json", "GET, HEAD", kNothing, kPublic, routes::openapi},
    {"/js/oddsclient.mjs", "GET, HEAD", kNothing, kPublic, routes::oddsclient_module},
    {"/stream/play", "GET", kNothing, kPublic, routes::stream_play},
    {"/healthz", "GET", kNothing, kPublic, routes::healthz},
};

// Whether `method` is one of the route's comma-separated methods.
bool allows_method(const Route& r, std::string_view method) {
  for (std::string_view list = r.methods; !list.empty();) {
    size_t c = list.find(',');
    if (list.substr(0, c) == method) return true;
    if (c == std::string_view::npos) break;
    list.remove_prefix(c + 1);
    while (!list.empty() && list.front() == ' ') list.remove_prefix(1);
  }
  return false;
}

// True when the request's Origin (or, without one, its Referer) is one of
// this server's pages: the explorer calling its own server, directly or
// through the proxy at --public-url.
bool same_origin(const http::Request& req, const PublicUrl& pub) {
  auto from = browser_origin(req);
  return from && own_origin(*from, req, pub);
}

// allow_origins, a browser guard: a request that names no origin (not from
// a browser) and the server's own pages (the widget polling from its
// iframe) pass; any other origin must be on the key's list.
bool origin_allowed(const http::Request& req, const ApiKey& key, const PublicUrl& pub) {
  if (key.allow_origins.empty()) return true;
  auto from = browser_origin(req);
  return !from || own_origin(*from, req, pub) || key.allows_origin(*from);
}

// The key the request presents (header, else the api_key parameter), or
// the explorer's demo key from its own page; null when neither.
const ApiKey* find_key(Call& c, const KeyStore& keys, bool& wrong_origin) {
  std::string_view presented = c.req.header("X-API-Key");
  std::optional<std::string> from_query;
  if (presented.empty() && (from_query = c.param("api_key"))) presented = *from_query;
  if (const ApiKey* key = keys.find(presented)) return key;
  const std::string& demo = c.api.explorer_key;
  if (!presented.empty() && presented.size() == demo.size() &&
      CRYPTO_memcmp(presented.data(), demo.data(), presented.size()) == 0) {
    // The explorer's demo key works only from a page of this server: its
    // Origin (or Referer) must name the host the request was sent to.
    if (!same_origin(c.req, c.api.inputs.public_url)) {
      wrong_origin = true;
      return nullptr;
    }
    return &c.api.explorer_api_key;
  }
  return nullptr;
}

// Hands an admitted /ws or /pt-ws upgrade to the relay, or answers why not.
void open_stream(Call& c, const ApiKey& key, std::string client, Takeover& takeover) {
  StreamTicket t;
  HandshakeError e = check_stream_handshake(c.req, t);
  if (e.status) return c.error(e.status, e.error, e.extra_headers);
  std::memcpy(&t.key_id, key.digest.data(), sizeof t.key_id);
  t.key_name = key.name;
  t.client = std::move(client);
  t.permissions = key.permissions;
  t.max_connections = key.ws_connections;
  // The relay writes the 101 (or /pt-sse's 200) itself, so nothing it sends
  // can overtake it.
  takeover = [open = c.api.inputs.open_stream, t = std::move(t)](int fd, std::string pending) mutable {
    open(std::move(t), fd, std::move(pending));
  };
}

}  // namespace

std::vector<std::string_view> route_paths() {
  std::vector<std::string_view> paths;
  for (const Route& r : kRoutes) paths.emplace_back(r.path);
  return paths;
}

RestApi::RestApi(RestInputs in)
    : inputs(std::move(in)),
      limiter(inputs.rate_window_s),
      handshakes(inputs.handshakes_per_slot),
      conn_limits(inputs.http_per_address) {
  for (uint32_t i = 0; i < std::max<uint32_t>(1, inputs.http_threads); ++i)
    loops.push_back(std::make_unique<LoopCaches>(inputs.catalog, inputs.catalog_updates));
  has_catalog = inputs.catalog != nullptr;
  RAND_bytes(reinterpret_cast<unsigned char*>(&etag_seed), sizeof etag_seed);
  unsigned char raw[16];
  RAND_bytes(raw, sizeof raw);
  char hex[33];
  for (int i = 0; i < 16; ++i) std::snprintf(hex + 2 * i, 3, "%02x", raw[i]);
  explorer_key = std::string("explorer-") + hex;
  explorer_api_key.name = "explorer";
  explorer_api_key.digest = sha256(explorer_key);
  explorer_api_key.permissions = kPermLive | kPermPrematch | kPermOdds | kPermScores;  // read-only
  explorer_api_key.rate_limit = 600;
  explorer_api_key.ws_connections = 100;  // shared by every visitor of the page
  explorer_api_key.http_connections = 1024;
}

void RestApi::refuse(int status, const char* why, std::string& out) {
  http::ResponseHead h;
  h.status = status;
  h.keep_alive = false;
  http::append_response(out, h, err::body(why));
}

namespace {

// The answer's status from the status line the handler wrote ("HTTP/1.1 NNN").
int written_status(std::string_view answer) {
  if (answer.size() < 12 || answer.substr(0, 9) != "HTTP/1.1 ") return 0;
  return (answer[9] - '0') * 100 + (answer[10] - '0') * 10 + (answer[11] - '0');
}

// The key an access line names: the matched key's name; for a key that
// matched none, a hash of what was presented (never the key itself).
std::string logged_key(const http::Request& req, const ApiKey* key) {
  if (key) return key->name;
  std::string_view presented = req.header("X-API-Key");
  std::optional<std::string> from_query;
  if (presented.empty() && (from_query = http::query_param(req.query, "api_key"))) presented = *from_query;
  return presented.empty() ? std::string() : access_log::key_hint(presented);
}

}  // namespace

// Every answer through dispatch(); with --access-log, one line for it.
void RestApi::handle(const http::Request& req, Peer& peer, net::OutQueue& out, Takeover& takeover) {
  if (!access_log::log().on()) return (void)dispatch(req, peer, out, takeover);
  const auto t0 = std::chrono::steady_clock::now();
  const net::OutQueue::Mark mark = out.mark();
  const ApiKey* key = dispatch(req, peer, out, takeover);
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0);
  const std::string client = format_ip(client_address(peer.ip, req, inputs.trusted_proxies));
  const std::string name = logged_key(req, key);
  access_log::Request line;
  line.client = client;
  line.key = name;
  line.key_unknown = !key && !name.empty();
  line.method = req.method;
  line.path = req.path;
  line.status = takeover ? 101 : written_status(out.head_since(mark));
  line.bytes = out.bytes_since(mark);
  line.micros = static_cast<uint64_t>(us.count());
  access_log::request(line, wall_ms());
}

const ApiKey* RestApi::dispatch(const http::Request& req, Peer& peer, net::OutQueue& out, Takeover& takeover) {
  Call c(req, out, *this, *loops.at(peer.loop));
  dispatch(c, peer, takeover);
  return c.key;
}

bool RestApi::admit_connection(Call& c, Peer& peer, const ApiKey* key) {
  const bool ok = key ? conn_limits.admit_key(peer, *key)
                      : conn_limits.admit_address(peer, client_address(peer.ip, c.req, inputs.trusted_proxies));
  if (ok) return true;
  (key ? stats->refused_key_limit : stats->refused_address_limit).fetch_add(1, std::memory_order_relaxed);
  c.close = peer.close_after = true;
  // A slot frees as soon as another connection closes: worth a retry soon.
  c.error(429, key ? err::kTooManyHttpConnections : err::kTooManyAddressConnections, "Retry-After: 1\r\n");
  return false;
}

void RestApi::dispatch(Call& c, Peer& peer, Takeover& takeover) {
  const http::Request& req = c.req;
  const Route* route = nullptr;
  for (const auto& r : kRoutes)
    if (req.path == r.path) route = &r;
  const bool stream = route && (route->flags & kStream);
  if (route && ((stream && !inputs.open_stream) || ((route->flags & kCatalog) && !has_catalog) ||
                ((route->flags & kHistory) && !inputs.history)))
    route = nullptr;
  if (req.method == "OPTIONS" && !stream) {  // CORS preflight: no key needed
    // Appended, not a chain of operator+: GCC 12 takes the chain's inlined
    // copies for writes past a short string's buffer (-Warray-bounds).
    std::string allow = "Access-Control-Allow-Methods: GET, POST, OPTIONS\r\n";
    allow.append(Call::kAllowHeaders).append("Access-Control-Max-Age: 86400\r\n");
    return c.send_raw(204, {}, {}, allow);
  }
  if (!route) return c.error(404, err::kNotFound);
  if (!allows_method(*route, req.method)) {
    std::string allow = std::string("Allow: ") + route->methods + "\r\n";
    return c.error(405, err::kMethodNotAllowed, allow);
  }
  if (!ready() && req.path != "/healthz") return c.error(503, err::kStarting, "Retry-After: 1\r\n");
  if (route->flags & kPublic) {
    if (admit_connection(c, peer, nullptr)) route->answer(c);
    return;
  }

  bool wrong_origin = false;
  auto keys = inputs.keys->load();
  const ApiKey* key = find_key(c, *keys, wrong_origin);
  if (wrong_origin) return c.error(403, err::kExplorerKeyOrigin);
  c.key = key;  // named in the access line, refused or not
  if (!key || !key->enabled) return c.error(401, err::kInvalidKey);
  if (!key->allows_ip(client_address(peer.ip, req, inputs.trusted_proxies))) return c.error(403, err::kIpNotAllowed);
  if (!origin_allowed(req, *key, inputs.public_url)) return c.error(403, err::kOriginNotAllowed);
  // Streams are the relay's to count (ws_connections): the upgrade's
  // connection leaves this listener at once.
  if (!stream && !admit_connection(c, peer, key)) return;
  if (!stream) c.snap = inputs.snapshots->load();  // one snapshot per response
  // Permissions, for every route and every /rdstn command, here and only
  // here: the data this answer will carry against what the key holds.
  Needs needs = route->needs;
  if (route->declare) route->declare(c, needs);
  if (uint32_t lack = missing(needs, key->permissions)) return c.error(403, refusal(lack));
  // Stream handshakes have their own per-key rate, apart from the REST
  // limit: a desk at its REST quota can still reconnect its streams.
  const bool counted = !stream;
  RateLimiter::Verdict v = counted ? limiter.check(*key, wall_ms() / 1000) : handshakes.check(*key, steady_ms());
  if (counted && v.limit) c.add_rate_headers(v.limit, v.remaining, v.reset);
  if (!v.allowed) {
    c.body = err::rate_limited(counted ? err::kRateLimited : err::kTooManyHandshakes, v.limit,
                               counted ? limiter.window() : 60, v.retry_after);
    return c.send(429, "Retry-After: " + std::to_string(v.retry_after) + "\r\n");
  }
  if (stream) return open_stream(c, *key, format_ip(client_address(peer.ip, req, inputs.trusted_proxies)), takeover);
  route->answer(c);
}

}  // namespace oddsrelay::rest
