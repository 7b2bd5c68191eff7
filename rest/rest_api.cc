#include "rest/rest_api.h"

#include <chrono>
#include <charconv>
#include <cstring>
#include <optional>
#include <unordered_set>

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <rapidjson/document.h>

#include "protocol/event_id.h"
#include "protocol/http_response.h"
#include "protocol/sports.h"
#include "rest/errors.h"
#include "rest/gzip.h"
#include "rest/json_views.h"
#include "rest/embedded_files.h"
#include "rest/rdstn.h"
#include "rest/widget_views.h"

namespace oddsrelay::rest {

namespace {

constexpr size_t kMaxIds = 100;
constexpr size_t kGzipMin = 1024;

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::optional<int64_t> parse_int(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// Comma-separated ids, trimmed, empties dropped, duplicates kept once.
std::vector<std::string> split_ids(std::string_view s) {
  std::vector<std::string> out;
  while (!s.empty()) {
    size_t c = s.find(',');
    std::string_view id = s.substr(0, c);
    while (!id.empty() && id.front() == ' ') id.remove_prefix(1);
    while (!id.empty() && id.back() == ' ') id.remove_suffix(1);
    if (!id.empty() && std::find(out.begin(), out.end(), id) == out.end()) out.emplace_back(id);
    if (c == std::string_view::npos) break;
    s.remove_prefix(c + 1);
  }
  return out;
}

const EventEntry* lookup(const Snapshot& s, std::string_view id) {
  ParsedId p = parse_event_id(id);
  return p.ok() ? s.events.find(p.number) : nullptr;
}

// What a route needs besides a key and a permission.
enum RouteFlags : uint8_t {
  kPublic = 1 << 0,   // no key: the page or the URL carries its own credential
  kStream = 1 << 1,   // a WebSocket upgrade, handed to the relay
  kCatalog = 1 << 2,  // answered from the market catalog
};

struct Route {
  const char* path;
  const char* methods;  // for Allow
  Needs needs;          // the data every answer of the route carries (rest/access.h)
  uint8_t flags = 0;
  // The data this request's answer carries beyond `needs`, when that
  // depends on the request (an event's state, the /rdstn commands).
  void (*declare)(RestApi::Call&, Needs&) = nullptr;
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

void declare_event(RestApi::Call& c, Needs& n);
void declare_rdstn(RestApi::Call& c, Needs& n);

constexpr Route kRoutes[] = {
    {"/v1/sports", "GET, OPTIONS", kNothing},  // counts only
    {"/v1/live", "GET, OPTIONS", need(Data::LiveEvent)},
    {"/v1/prematch", "GET, OPTIONS", need(Data::PrematchEvent)},
    {"/v1/event", "GET, OPTIONS", any_of({Data::LiveEvent, Data::PrematchEvent}), 0, declare_event},
    {"/v1/odds", "GET, POST, OPTIONS", need(Data::Price)},
    {"/v1/scores", "GET, OPTIONS", need(Data::Score)},
    {"/v1/status", "GET, OPTIONS", kNothing},
    {"/v1/settlements", "GET, OPTIONS", need(Data::Settlement), kCatalog},
    // The legacy event-list format: a key sees some events or has no use
    // for it; then each command needs what its answer carries.
    {"/rdstn", "POST, OPTIONS", any_of({Data::LiveEvent, Data::PrematchEvent}), 0, declare_rdstn},
    {"/v1/stream", "GET, OPTIONS", need(Data::Stream)},
    {"/widget-events", "GET, OPTIONS", need(Data::Widget)},
    {"/widget-data", "GET, OPTIONS", need(Data::Widget)},
    {"/widget", "GET", need(Data::Widget)},
    {"/v1/markets", "GET, OPTIONS", need(Data::Dictionary), kCatalog},
    {"/v1/market-groups", "GET, OPTIONS", need(Data::Dictionary), kCatalog},
    // Streams carry several kinds; the relay sends each frame only to keys
    // whose permissions admit it (relay/fanout.cc), by the same table.
    {"/ws", "GET", need(Data::LiveEvent), kStream},
    {"/pt-ws", "GET", any_of({Data::LiveEvent, Data::PrematchEvent, Data::Price}), kStream},
    {"/docs/explore", "GET", kNothing, kPublic},
    {"/docs/settlement", "GET, HEAD", kNothing, kPublic},
    {"/stream/play", "GET", kNothing, kPublic},
    {"/healthz", "GET", kNothing, kPublic},
};

}  // namespace

// One request being answered: the request, the snapshot it reads, and the
// helpers that frame the answer.
struct RestApi::Call {
  Call(const http::Request& r, std::string& o) : req(r), out(o) {}
  const http::Request& req;
  std::string& out;
  SnapshotPtr snap;
  std::optional<RdstnRequest> rdstn;  // /rdstn: the validated commands
  std::string rdstn_error;            // /rdstn: why the body is refused (400)
  std::string body;  // JSON being built
  json::StringSink sink{body};
  json::Writer w{sink};

  std::optional<std::string> param(std::string_view name) const { return http::query_param(req.query, name); }

  void send(int status, std::string_view extra = {}) {
    http::ResponseHead h;
    h.status = status;
    h.extra = extra;
    h.keep_alive = req.keep_alive;
    std::string_view accept = req.header("Accept-Encoding");
    if (body.size() > kGzipMin && accept.find("gzip") != std::string_view::npos) {
      std::string z;
      if (gzip_compress(body, z)) {
        h.content_encoding = "gzip";
        http::append_response(out, h, z);
        return;
      }
    }
    http::append_response(out, h, body);
  }

  void error(int status, std::string_view msg, std::string_view extra = {}) {
    body.clear();
    w.Reset(sink);
    w.StartObject();
    w.Key("error");
    json::str(w, msg);
    w.EndObject();
    send(status, extra);
  }

  // `sport` query parameter: absent, or a positive integer.
  bool sport_param(std::optional<int32_t>& sport) {
    auto v = param("sport");
    if (!v || v->empty()) return true;
    auto n = parse_int(*v);
    if (!n || *n <= 0 || *n > INT32_MAX) {
      error(400, err::kBadSport);
      return false;
    }
    sport = static_cast<int32_t>(*n);
    return true;
  }

  void begin_success() {
    w.StartObject();
    w.Key("success");
    w.Bool(true);
  }
};

RestApi::RestApi(RestContext ctx)
    : ctx_(std::move(ctx)), limiter_(ctx_.rate_window_s), handshakes_(ctx_.handshakes_per_slot) {
  if (ctx_.catalog) catalog_views_ = std::make_unique<CatalogViews>(ctx_.catalog, ctx_.catalog_updates);
  unsigned char raw[16];
  RAND_bytes(raw, sizeof raw);
  char hex[33];
  for (int i = 0; i < 16; ++i) std::snprintf(hex + 2 * i, 3, "%02x", raw[i]);
  explorer_key_ = std::string("explorer-") + hex;
  explorer_api_key_.name = "explorer";
  explorer_api_key_.digest = sha256(explorer_key_);
  explorer_api_key_.permissions = kPermLive | kPermPrematch | kPermOdds | kPermScores;  // read-only
  explorer_api_key_.rate_limit = 600;
  explorer_api_key_.ws_connections = 100;  // shared by every visitor of the page
}

void RestApi::refuse(int status, const char* why, std::string& out) {
  std::string body = "{\"error\":\"";
  body += why;  // parser reasons are constants without quotes or backslashes
  body += "\"}";
  http::ResponseHead h;
  h.status = status;
  h.keep_alive = false;
  http::append_response(out, h, body);
}

namespace {

void get_sports(RestApi::Call& c) {
  c.begin_success();
  c.w.Key("data");
  c.w.StartArray();
  for (const SportCount& s : c.snap->sports) {
    c.w.StartObject();
    c.w.Key("id");
    c.w.Int(s.sport);
    c.w.Key("name");
    const char* name = sport_name(s.sport);
    c.w.String(name ? name : "Other");
    c.w.Key("live_count");
    c.w.Uint(s.live);
    c.w.Key("prematch_count");
    c.w.Uint(s.prematch);
    c.w.EndObject();
  }
  c.w.EndArray();
  c.w.EndObject();
  c.send(200);
}

void get_list(RestApi::Call& c, bool live) {
  std::optional<int32_t> sport;
  if (!c.sport_param(sport)) return;
  std::optional<uint32_t> limit;
  if (!live) {
    if (auto v = c.param("limit"); v && !v->empty()) {
      auto n = parse_int(*v);
      if (!n || *n < 1 || *n > 10000) return c.error(400, err::kBadLimit);
      limit = static_cast<uint32_t>(*n);
    }
  }
  auto groups = list_events(*c.snap, live, sport, limit);
  c.begin_success();
  if (live) {
    c.w.Key("ts");
    c.w.Int64(c.snap->last_live_at);
  }
  c.w.Key("sport");
  if (sport) c.w.Int(*sport);
  else c.w.Null();
  c.w.Key("data");
  if (sport) {
    write_events(c.w, groups.empty() ? std::vector<const EventEntry*>{} : groups[0].events);
  } else {
    c.w.StartObject();
    for (const auto& g : groups) {
      json::key(c.w, std::to_string(g.sport));
      write_events(c.w, g.events);
    }
    c.w.EndObject();
  }
  c.w.EndObject();
  c.send(200);
}

void get_event(RestApi::Call& c) {
  auto id = c.param("id");
  if (!id || id->empty()) return c.error(400, err::kMissingId);
  std::optional<int32_t> sport;
  if (!c.sport_param(sport)) return;
  const EventEntry* e = lookup(*c.snap, *id);
  if (!e || !e->listed() || (sport && e->sport() != *sport)) return c.error(404, err::kEventNotFound);
  c.begin_success();
  c.w.Key("data");
  c.w.RawValue(e->info->json.data(), e->info->json.size(), rapidjson::kObjectType);
  c.w.EndObject();
  c.send(200);
}

// The events named by `ids` (1..100), or an error already sent.
bool resolve_ids(RestApi::Call& c, const std::vector<std::string>& ids, std::vector<const EventEntry*>& out) {
  if (ids.empty()) {
    c.error(400, err::kMissingIds);
    return false;
  }
  if (ids.size() > kMaxIds) {
    c.error(400, err::kTooManyIds);
    return false;
  }
  std::unordered_set<uint64_t> seen;
  for (const auto& id : ids)
    if (const EventEntry* e = lookup(*c.snap, id); e && seen.insert(e->number).second) out.push_back(e);
  return true;
}

void get_odds(RestApi::Call& c, OddsCache& cache) {
  std::vector<const EventEntry*> events;
  if (!resolve_ids(c, split_ids(c.param("ids").value_or("")), events)) return;
  // Assembled from cached per-event fragments with plain appends: the JSON
  // writer would copy each fragment a character at a time. Event ids need no
  // escaping (they parsed as ids: letters, digits, '-', '_', '.').
  std::string& b = c.body;
  b += "{\"success\":true,\"data\":{";
  bool first = true;
  for (const EventEntry* e : events) {
    if (!e->listed() && e->markets.empty()) continue;  // unknown to clients: absent
    const std::string& odds = cache.get(c.snap->events.find_shared(e->number));
    if (!first) b += ',';
    first = false;
    b += '"';
    b += e->key;
    b += "\":";
    b += odds;
  }
  b += "}}";
  c.send(200);
}

void post_odds(RestApi::Call& c) {
  rapidjson::Document d;
  d.Parse(c.req.body.data(), c.req.body.size());
  if (d.HasParseError() || !d.IsObject() || !d.HasMember("market") || !d["market"].IsUint() || !d.HasMember("events") ||
      !d["events"].IsArray() || (d.HasMember("sport") && !d["sport"].IsInt()))
    return c.error(400, err::kBadOddsBody);
  std::vector<std::string> ids;
  for (const auto& v : d["events"].GetArray()) {
    if (!v.IsString()) return c.error(400, err::kBadOddsBody);
    std::string_view id(v.GetString(), v.GetStringLength());
    // A repeated id is counted once, as on GET: it does not use up the limit.
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.emplace_back(id);
    if (ids.size() > kMaxIds) break;  // already too many: resolve_ids refuses it
  }
  std::vector<const EventEntry*> events;
  if (!resolve_ids(c, ids, events)) return;
  std::optional<int32_t> sport;
  if (d.HasMember("sport")) sport = d["sport"].GetInt();
  const uint32_t market = d["market"].GetUint();
  c.w.StartObject();  // a bare object, as SPEC.md shows
  for (const EventEntry* e : events) {
    if ((sport && e->listed() && e->sport() != *sport) || !e->market(market)) continue;
    json::key(c.w, e->key);
    write_odds(c.w, *e, OddsForm::Post, market);
  }
  c.w.EndObject();
  c.send(200);
}

void get_scores(RestApi::Call& c) {
  std::optional<int32_t> sport;
  if (!c.sport_param(sport)) return;
  std::vector<const EventEntry*> events;
  if (auto ids = c.param("ids"); ids && !ids->empty()) {
    if (!resolve_ids(c, split_ids(*ids), events)) return;
  } else {
    c.snap->events.for_each([&](const EventEntry& e) {
      if (e.listed() && e.score) events.push_back(&e);
    });
    std::sort(events.begin(), events.end(), [](auto* a, auto* b) { return a->number < b->number; });
  }
  c.begin_success();
  c.w.Key("data");
  c.w.StartObject();
  for (const EventEntry* e : events) {
    if (!e->score || (sport && e->sport() != *sport)) continue;
    json::key(c.w, e->key);
    write_score(c.w, *e);
  }
  c.w.EndObject();
  c.w.EndObject();
  c.send(200);
}

// True when the request's Origin (or, without one, its Referer) names the
// host it was sent to: the explorer page calling its own server.
bool same_origin(const http::Request& req) {
  std::string_view host = req.header("Host"), from = req.header("Origin");
  if (from.empty()) from = req.header("Referer");
  if (host.empty() || from.empty()) return false;
  size_t scheme = from.find("://");
  if (scheme == std::string_view::npos) return false;
  from.remove_prefix(scheme + 3);
  from = from.substr(0, from.find('/'));
  return from == host;
}

// A 0/1 flag parameter; false with an error sent when it is anything else.
bool flag_param(RestApi::Call& c, const char* name, bool& out) {
  auto v = c.param(name);
  if (!v || v->empty() || *v == "0") return (out = false, true);
  if (*v == "1") return (out = true, true);
  c.error(400, std::string("Invalid ") + name + " parameter: expected 0 or 1");
  return false;
}

// `lang`: one of the catalog's codes; anything else resolves to English.
int lang_param(RestApi::Call& c, const Catalog& cat, bool& given) {
  auto v = c.param("lang");
  given = v && !v->empty();
  int i = given ? cat.lang_index(*v) : 0;
  return i < 0 ? 0 : i;
}

// A cached catalog answer, or 304 when the client holds the same version.
void send_cached(RestApi::Call& c, const CatalogViews::Encoded& e) {
  std::string extra = "ETag: " + e.etag + "\r\nCache-Control: no-cache\r\n";
  std::string_view inm = c.req.header("If-None-Match");
  if (!inm.empty() && (inm == "*" || inm.find(e.etag) != std::string_view::npos ||
                       inm.find(std::string_view(e.etag).substr(2)) != std::string_view::npos)) {
    http::ResponseHead h;
    h.status = 304;
    h.extra = extra;
    h.keep_alive = c.req.keep_alive;
    http::append_response(c.out, h, {});
    return;
  }
  http::ResponseHead h;
  h.extra = extra;
  h.keep_alive = c.req.keep_alive;
  if (!e.gz.empty() && c.req.header("Accept-Encoding").find("gzip") != std::string_view::npos) {
    h.content_encoding = "gzip";
    http::append_response(c.out, h, e.gz);
  } else {
    http::append_response(c.out, h, e.body);
  }
}

// /v1/status: what the state holds and what retention took (docs/api.md).
// The four kinds partition the events held: live and pre-match count listed
// events without a final; ended, every held event with one (listed or not);
// other, the rest (removed without a final, odds before their event).
void write_retention_status(json::Writer& w, const Snapshot& s) {
  const uint64_t held = s.events.size(), live = s.listed_live - s.ended_live,
                 prematch = s.listed_prematch - s.ended_prematch;
  w.Key("events");
  w.StartObject();
  w.Key("held");
  w.Uint64(held);
  w.Key("live");
  w.Uint64(live);
  w.Key("prematch");
  w.Uint64(prematch);
  w.Key("ended");
  w.Uint64(s.ended);
  w.Key("other");
  w.Uint64(held - live - prematch - s.ended);
  w.Key("evicted");
  w.Uint64(s.evicted);
  w.EndObject();
  w.Key("state_bytes");
  w.Uint64(s.bytes);
  w.Key("retain_ended");
  w.Int64(s.retain_ended_ms / 1000);
  w.Key("feed_clock");
  w.Int64(s.feed_clock);
}

// GET /v1/settlements: ids (aliases event_id, fixture_id), include_inplay, lang.
void get_settlements(RestApi::Call& c, CatalogViews& views, SettlementCache& cache) {
  std::optional<std::string> ids;
  for (const char* name : {"ids", "event_id", "fixture_id"})
    if ((ids = c.param(name)) && !ids->empty()) break;
  bool inplay = false, lang_given = false;
  if (!flag_param(c, "include_inplay", inplay)) return;
  const std::vector<std::string> list = split_ids(ids.value_or(""));
  if (list.empty()) return c.error(400, err::kMissingIds);
  if (list.size() > kMaxIds) return c.error(400, err::kTooManyIds);
  const int lang = lang_param(c, views.catalog(), lang_given);
  std::string& b = c.body;
  b += "{\"success\":true,\"version\":\"v1\",\"policy_url\":\"/docs/settlement\",\"data\":{";
  std::vector<std::string_view> missing;
  std::unordered_set<uint64_t> seen;
  bool first = true;
  for (const std::string& id : list) {
    ParsedId p = parse_event_id(id);
    auto e = p.ok() ? c.snap->events.find_shared(p.number) : nullptr;
    if (!e || (!e->score && e->markets.empty() && !e->listed())) {
      missing.push_back(id);
      continue;
    }
    if (!seen.insert(e->number).second) continue;
    if (!first) b += ',';
    first = false;
    b += '"';
    b += e->key;  // ids that parsed need no escaping
    b += "\":";
    b += cache.get(e, views.catalog(), lang, inplay);
  }
  b += "},\"not_found\":[";
  for (size_t i = 0; i < missing.size(); ++i) {
    if (i) b += ',';
    std::string esc;
    json::StringSink sink(esc);
    json::Writer w(sink);
    json::str(w, missing[i]);
    b += esc;
  }
  b += "]}";
  c.send(200);
}

// GET /v1/stream?id=: a signed player URL for an event with coverage.
void get_stream(RestApi::Call& c, const ApiKey& key, const StreamOptions& o, const StreamSigner& signer) {
  auto id = c.param("id");
  if (!id || id->empty()) return c.error(400, err::kMissingId);
  const EventEntry* e = lookup(*c.snap, *id);
  if (!e || !e->listed()) return c.error(404, err::kEventNotFound);
  if (!e->live() || std::find(o.sports.begin(), o.sports.end(), e->sport()) == o.sports.end())
    return c.error(404, err::kNoStreamCoverage);
  char key_id[17];
  for (int i = 0; i < 8; ++i) std::snprintf(key_id + 2 * i, 3, "%02x", key.digest[static_cast<size_t>(i)]);
  const int64_t exp = wall_ms() / 1000 + o.ttl_s;
  const std::string sig = signer.sign(e->key, key_id, exp);
  std::string host(c.req.header("Host"));
  std::string url = (host.empty() ? std::string() : "http://" + host) + "/stream/play?event=" + e->key + "&key=" +
                    key_id + "&exp=" + std::to_string(exp) + "&sig=" + sig;
  c.begin_success();
  c.w.Key("data");
  c.w.StartObject();
  c.w.Key("event_id");
  json::str(c.w, e->key);
  c.w.Key("url");
  json::str(c.w, url);
  c.w.Key("expires_at");
  c.w.Int64(exp);
  c.w.Key("format");
  c.w.String("hls");
  c.w.EndObject();
  c.w.EndObject();
  c.send(200);
}

// GET /stream/play: the player behind a signed URL (no API key: the
// signature is the credential).
void stream_play(RestApi::Call& c, const StreamSigner& signer) {
  auto event = c.param("event"), key = c.param("key"), exp = c.param("exp"), sig = c.param("sig");
  auto e = exp ? parse_int(*exp) : std::nullopt;
  if (!event || !key || !e || !sig) return c.error(403, err::kBadStreamSignature);
  switch (signer.verify(*event, *key, *e, *sig, wall_ms() / 1000)) {
    case StreamSigner::Check::BadSignature: return c.error(403, err::kBadStreamSignature);
    case StreamSigner::Check::Expired: return c.error(403, err::kStreamExpired);
    case StreamSigner::Check::Ok: break;
  }
  c.begin_success();
  c.w.Key("event_id");
  json::str(c.w, *event);
  c.w.Key("playlist");
  json::str(c.w, "/stream/" + *event + "/index.m3u8");
  c.w.EndObject();
  c.send(200);
}

void get_widget_data(RestApi::Call& c, const ApiKey& key) {
  auto id = c.param("event_id");
  if (!id || id->empty()) return c.error(400, err::kMissingEventId);
  const EventEntry* e = lookup(*c.snap, *id);
  if (!e || !e->listed()) return c.error(404, err::kEventNotFound);
  c.begin_success();
  c.w.Key("data");
  write_widget_data(c.w, *e, key.widget_json);
  c.w.EndObject();
  c.send(200);
}

void send_page(RestApi::Call& c, std::string_view html) {
  http::ResponseHead h;
  h.content_type = "text/html; charset=utf-8";
  h.keep_alive = c.req.keep_alive;
  h.extra = "Cache-Control: no-cache\r\n";
  http::append_response(c.out, h, html);
}

void get_markets(RestApi::Call& c, CatalogViews& views) {
  std::optional<int32_t> sport;
  bool nested = false, groups = false, lang_given = false;
  if (!c.sport_param(sport) || !flag_param(c, "nested", nested) || !flag_param(c, "groups", groups)) return;
  if (groups && !sport) return c.error(400, err::kGroupsNeedSport);
  int lang = lang_param(c, views.catalog(), lang_given);
  send_cached(c, views.markets(sport, nested, groups, lang));
}

void get_market_groups(RestApi::Call& c, CatalogViews& views) {
  std::optional<int32_t> sport;
  bool lang_given = false;
  if (!c.sport_param(sport)) return;
  int lang = lang_param(c, views.catalog(), lang_given);
  send_cached(c, views.market_groups(sport, lang, lang_given));
}

// /v1/event: the event's own permission, by its state in this snapshot.
void declare_event(RestApi::Call& c, Needs& n) {
  auto id = c.param("id");
  const EventEntry* e = id ? lookup(*c.snap, *id) : nullptr;
  if (e && e->listed()) n.add(event_data(e->live()));
}

// /rdstn: what every command's answer carries; a body that does not
// validate declares nothing more and is answered 400.
void declare_rdstn(RestApi::Call& c, Needs& n) {
  c.rdstn.emplace();
  if (parse_rdstn(c.req.body, *c.rdstn, c.rdstn_error)) rdstn_needs(*c.rdstn, *c.snap, n);
  else if (c.rdstn_error.empty()) c.rdstn_error = "Invalid body";
}

}  // namespace

// The routes that need no key.
void RestApi::answer_public(Call& c, std::string_view path) {
  if (path == "/healthz") {  // for load balancers: no key, nothing about the data
    c.w.StartObject();
    c.w.Key("status");
    c.w.String(ready() ? "ok" : "starting");
    c.w.Key("uptime");
    c.w.Int64((wall_ms() - ctx_.started_ms) / 1000);
    c.w.EndObject();
    return c.send(ready() ? 200 : 503);
  }
  if (path == "/stream/play") return stream_play(c, stream_signer_);
  if (path == "/docs/settlement") {
    http::ResponseHead h;
    h.content_type = "text/markdown; charset=utf-8";
    h.keep_alive = c.req.keep_alive;
    return http::append_response(c.out, h, settlement_policy());
  }
  // /docs/explore: the page carries the origin-locked demo key.
  auto ev = c.param("event");
  if (!ev || ev->empty()) return c.error(400, err::kMissingEvent);
  std::string page(explorer_page());
  if (size_t at = page.find("__DEMO_KEY__"); at != std::string::npos) page.replace(at, 12, explorer_key_);
  send_page(c, page);
}

void RestApi::handle(const http::Request& req, const Peer& peer, std::string& out, Takeover& takeover) {
  Call c(req, out);
  const Route* route = nullptr;
  for (const auto& r : kRoutes)
    if (req.path == r.path) route = &r;
  const bool stream = route && (route->flags & kStream);
  if (route && ((stream && !ctx_.open_stream) || ((route->flags & kCatalog) && !catalog_views_))) route = nullptr;
  if (req.method == "OPTIONS" && !stream) {  // CORS preflight: no key needed
    http::ResponseHead h;
    h.status = 204;
    h.keep_alive = req.keep_alive;
    h.extra =
        "Access-Control-Allow-Methods: GET, POST, OPTIONS\r\n"
        "Access-Control-Allow-Headers: X-API-Key, Content-Type\r\n"
        "Access-Control-Max-Age: 86400\r\n";
    http::append_response(out, h, {});
    return;
  }
  if (!route) return c.error(404, err::kNotFound);
  const bool post = req.method == "POST";
  if (!allows_method(*route, req.method)) {
    std::string allow = std::string("Allow: ") + route->methods + "\r\n";
    return c.error(405, err::kMethodNotAllowed, allow);
  }
  if (!ready() && req.path != "/healthz") return c.error(503, err::kStarting, "Retry-After: 1\r\n");
  if (route->flags & kPublic) return answer_public(c, req.path);

  std::string_view presented = req.header("X-API-Key");
  std::optional<std::string> from_query;
  if (presented.empty() && (from_query = c.param("api_key"))) presented = *from_query;
  KeyStorePtr keys = ctx_.keys->load();
  const ApiKey* key = keys->find(presented);
  if (!key && !presented.empty() && presented.size() == explorer_key_.size() &&
      CRYPTO_memcmp(presented.data(), explorer_key_.data(), presented.size()) == 0) {
    // The explorer's demo key works only from a page of this server: its
    // Origin (or Referer) must name the host the request was sent to.
    if (!same_origin(req)) return c.error(403, err::kExplorerKeyOrigin);
    key = &explorer_api_key_;
  }
  if (!key || !key->enabled) return c.error(401, err::kInvalidKey);
  if (!key->allows_ip(peer.ip)) return c.error(403, err::kIpNotAllowed);
  if (!stream) c.snap = ctx_.snapshots->load();  // one snapshot per response
  // Permissions, for every route and every /rdstn command, here and only
  // here: the data this answer will carry against what the key holds.
  Needs needs = route->needs;
  if (route->declare) route->declare(c, needs);
  if (uint32_t lack = missing(needs, key->permissions)) return c.error(403, refusal(lack));
  // Stream handshakes have their own per-key rate, apart from the REST
  // limit: a desk at its REST quota can still reconnect its streams.
  const bool counted = !stream;
  RateLimiter::Verdict v = counted ? limiter_.check(*key, wall_ms() / 1000) : handshakes_.check(*key, steady_ms());
  if (!v.allowed) {
    c.w.StartObject();
    c.w.Key("error");
    c.w.String(counted ? err::kRateLimited : err::kTooManyHandshakes);
    c.w.Key("limit");
    c.w.Uint(v.limit);
    c.w.Key("window");
    json::str(c.w, counted ? std::to_string(limiter_.window()) + "s" : std::string("60s"));
    c.w.Key("retry_after");
    c.w.Int(v.retry_after);
    c.w.EndObject();
    return c.send(429, "Retry-After: " + std::to_string(v.retry_after) + "\r\n");
  }

  if (stream) {
    StreamTicket t;
    HandshakeError e = check_stream_handshake(req, t);
    if (e.status) return c.error(e.status, e.error, e.extra_headers);
    std::memcpy(&t.key_id, key->digest.data(), sizeof t.key_id);
    t.key_name = key->name;
    t.permissions = key->permissions;
    t.max_connections = key->ws_connections;
    // The relay writes the 101 itself, so nothing it sends can overtake it.
    takeover = [open = ctx_.open_stream, t = std::move(t)](int fd, std::string pending) mutable {
      open(std::move(t), fd, std::move(pending));
    };
    return;
  }

  const std::string_view p = req.path;
  if (p == "/v1/sports") get_sports(c);
  else if (p == "/v1/live") get_list(c, true);
  else if (p == "/v1/prematch") get_list(c, false);
  else if (p == "/v1/event") get_event(c);
  else if (p == "/v1/odds") post ? post_odds(c) : get_odds(c, odds_cache_);
  else if (p == "/v1/scores") get_scores(c);
  else if (p == "/v1/stream") get_stream(c, *key, ctx_.stream, stream_signer_);
  else if (p == "/widget-events") {
    c.begin_success();
    c.w.Key("data");
    write_widget_events(c.w, *c.snap);
    c.w.EndObject();
    c.send(200);
  } else if (p == "/widget-data") get_widget_data(c, *key);
  else if (p == "/widget") {
    if (!c.param("event_id") || c.param("event_id")->empty()) return c.error(400, err::kMissingEventId);
    send_page(c, widget_page());
  }
  else if (p == "/rdstn") {
    if (!c.rdstn_error.empty()) return c.error(400, c.rdstn_error);
    write_rdstn(*c.rdstn, *c.snap, c.body);
    c.send(200);
  } else if (p == "/v1/settlements") get_settlements(c, *catalog_views_, settlements_);
  else if (p == "/v1/markets") get_markets(c, *catalog_views_);
  else if (p == "/v1/market-groups") get_market_groups(c, *catalog_views_);
  else if (p == "/v1/status") write_status(c);
}

// GET /v1/status: counters for operators, from this snapshot and the
// components' own counters; nothing here needs a permission.
void RestApi::write_status(Call& c) {
  const Snapshot& snap = *c.snap;
  c.begin_success();
  c.w.Key("status");
  c.w.String("ok");
  c.w.Key("live_events");
  c.w.Uint64(snap.listed_live);
  c.w.Key("prematch_events");
  c.w.Uint64(snap.listed_prematch);
  c.w.Key("last_update");
  c.w.Int64(snap.clock);
  c.w.Key("seq");
  c.w.Uint64(snap.seq);
  c.w.Key("epoch");
  json::str(c.w, snap.epoch);
  write_retention_status(c.w, snap);
  c.w.Key("uptime");
  c.w.Int64((wall_ms() - ctx_.started_ms) / 1000);
  // SPEC.md's relay statistics: el_* are the live event lists (rdstn `el`),
  // odds_channels the /pt-ws odds:<sport>:<event> channels (one per live
  // event with odds), odds_cached the events whose odds JSON is cached.
  uint64_t el_sports = 0, odds_channels = 0;
  for (const SportCount& sc : snap.sports) el_sports += sc.live > 0;
  snap.events.for_each([&](const EventEntry& e) { odds_channels += e.live() && !e.markets.empty(); });
  c.w.Key("upstream_ready");
  c.w.Bool(ctx_.upstream_ready && ctx_.upstream_ready());
  c.w.Key("downstream_clients");
  c.w.Uint64(ctx_.downstream_clients ? ctx_.downstream_clients() : 0);
  c.w.Key("odds_channels");
  c.w.Uint64(odds_channels);
  c.w.Key("el_sports");
  c.w.Uint64(el_sports);
  c.w.Key("el_events");
  c.w.Uint64(snap.listed_live);
  c.w.Key("odds_cached");
  c.w.Uint64(odds_cache_.size());
  c.w.Key("feed");
  if (ctx_.feed_status) ctx_.feed_status(c.w);
  else c.w.Null();
  c.w.Key("settlements");
  c.w.StartObject();
  c.w.Key("computed");
  c.w.Uint64(settlements_.computed());
  c.w.Key("served");
  c.w.Uint64(settlements_.served());
  c.w.EndObject();
  if (ctx_.relay_status) {
    c.w.Key("relay");
    ctx_.relay_status(c.w);
  }
  if (ctx_.webhook_status) {
    c.w.Key("webhooks");
    ctx_.webhook_status(c.w);
  }
  c.w.Key("log");
  if (ctx_.log_status) ctx_.log_status(c.w);
  else c.w.Null();
  c.w.Key("bus");
  if (ctx_.bus_status) ctx_.bus_status(c.w);
  else c.w.Null();
  if (ctx_.server) {
    c.w.Key("http");
    c.w.StartObject();
    c.w.Key("connections");
    c.w.Uint64(ctx_.server->connections());
    c.w.Key("requests");
    c.w.Uint64(ctx_.server->requests());
    c.w.Key("internal_errors");  // requests answered 500: a handler threw
    c.w.Uint64(ctx_.server->internal_errors());
    c.w.EndObject();
  }
  c.w.EndObject();
  c.send(200);
}

}  // namespace oddsrelay::rest
