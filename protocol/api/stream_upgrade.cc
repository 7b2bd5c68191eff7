#include "protocol/api/stream_upgrade.h"

#include <algorithm>
#include <charconv>

#include "protocol/api/errors.h"
#include "protocol/event_id.h"
#include "protocol/ws_deflate.h"
#include "protocol/ws_frame.h"

namespace oddsrelay::api {

namespace {

// True if the comma-separated header value holds `token` (case-insensitive).
bool has_token(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    size_t c = value.find(',');
    if (http::iequals(http::trim_ows(value.substr(0, c)), token)) return true;
    if (c == std::string_view::npos) break;
    value.remove_prefix(c + 1);
  }
  return false;
}

// A comma-separated list, each item through `parse`, at most `max` distinct
// values (as many items, counting repeats, once `max` are held); sorted. Empty items (",," or a trailing comma) are
// refused.
template <class T, class Parse>
bool parse_list(std::string_view s, size_t max, std::vector<T>& out, Parse parse) {
  while (!s.empty()) {
    size_t c = s.find(',');
    T v{};
    if (!parse(s.substr(0, c), v) || out.size() >= max) return false;
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    if (c == std::string_view::npos) break;
    s.remove_prefix(c + 1);
    if (s.empty()) return false;  // trailing comma
  }
  std::sort(out.begin(), out.end());
  return true;
}

// A positive decimal number, digits only.
template <class T>
bool positive(std::string_view t, T& v) {
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  return ec == std::errc() && p == t.data() + t.size() && v > 0;
}

bool event_number(std::string_view t, uint64_t& v) {
  ParsedId id = parse_event_id(t);
  v = id.number;
  return id.ok();
}

// events= and markets= (a missing or empty parameter is no filter), and
// conflate_ms= and verify=.
HandshakeError parse_filters(const http::Request& req, StreamTicket& t) {
  if (auto e = http::query_param(req.query, "events"); e && !e->empty())
    if (!parse_list(*e, kMaxFilterEvents, t.events, event_number)) return {400, err::kBadEvents, ""};
  if (auto m = http::query_param(req.query, "markets"); m && !m->empty())
    if (!parse_list(*m, kMaxFilterMarkets, t.markets, positive<uint32_t>)) return {400, err::kBadMarkets, ""};
  if (auto c = http::query_param(req.query, "conflate_ms")) {
    auto [p, ec] = std::from_chars(c->data(), c->data() + c->size(), t.conflate_ms);
    if (ec != std::errc() || p != c->data() + c->size() || t.conflate_ms > kMaxConflateMs)
      return {400, err::kBadConflate, ""};
  }
  if (auto v = http::query_param(req.query, "verify")) {
    if (*v != "0" && *v != "1" && !v->empty()) return {400, err::kBadVerify, ""};
    t.verify = *v == "1";
  }
  return {};
}

}  // namespace

bool parse_resume(std::string_view v, std::string& epoch, uint64_t& seq) {
  size_t colon = v.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon > 64) return false;
  std::string_view e = v.substr(0, colon), s = v.substr(colon + 1);
  uint64_t n = 0;  // from_chars: digits only, no sign, no overflow
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || p != s.data() + s.size()) return false;
  epoch.assign(e);
  seq = n;
  return true;
}

// The /pt-ws parameters, which /pt-sse shares.
static HandshakeError check_push_params(const http::Request& req, StreamTicket& t) {
  auto proto = http::query_param(req.query, "protocol");
  if (proto && *proto != "v2") return {400, err::kBadProtocol, ""};
  if (auto sports = http::query_param(req.query, "sports"); sports && !sports->empty())
    if (!parse_list(*sports, 64, t.sports, positive<int32_t>)) return {400, err::kBadSports, ""};
  return parse_filters(req, t);
}

static void check_resume(std::string_view r, StreamTicket& t) {
  t.resume =
      parse_resume(r, t.resume_epoch, t.resume_seq) ? StreamTicket::Resume::Asked : StreamTicket::Resume::Malformed;
}

HandshakeError check_stream_handshake(const http::Request& req, StreamTicket& t) {
  if (req.path == "/pt-sse") {
    t.kind = StreamTicket::Kind::Sse;
    if (HandshakeError e = check_push_params(req, t); e.status) return e;
    if (auto r = http::query_param(req.query, "resume"))
      check_resume(*r, t);
    else if (std::string_view id = req.header("Last-Event-ID"); !id.empty())
      check_resume(id, t);  // what EventSource sends when it reconnects
    return {};
  }
  t.kind = req.path == "/ws" ? StreamTicket::Kind::Ws : StreamTicket::Kind::PtWs;
  if (!has_token(req.header("Upgrade"), "websocket")) return {426, err::kUpgradeRequired, "Upgrade: websocket\r\n"};
  if (!has_token(req.header("Connection"), "upgrade")) return {400, err::kBadWsConnection, ""};
  if (req.header("Sec-WebSocket-Version") != "13") return {426, err::kBadWsVersion, "Sec-WebSocket-Version: 13\r\n"};
  t.accept = ws::accept_key(req.header("Sec-WebSocket-Key"));
  if (t.accept.empty()) return {400, err::kBadWsKey, ""};
  t.deflate_offered = ws::deflate_offer_acceptable(req.header("Sec-WebSocket-Extensions"));
  if (t.kind == StreamTicket::Kind::PtWs)
    if (HandshakeError e = check_push_params(req, t); e.status) return e;
  if (auto r = http::query_param(req.query, "resume")) check_resume(*r, t);
  return {};
}

}  // namespace oddsrelay::api
