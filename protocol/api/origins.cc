#include "protocol/api/origins.h"

namespace oddsrelay::api {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out)
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  return out;
}

uint16_t default_port(std::string_view scheme) { return scheme == "https" ? 443 : 80; }

// Letters, digits, '-', '.', '_' (and '*' for patterns, checked by the caller);
// a bracketed IPv6 literal.
bool host_ok(std::string_view h) {
  if (h.empty()) return false;
  if (h.front() == '[') {
    if (h.size() < 3 || h.back() != ']') return false;
    for (char ch : h.substr(1, h.size() - 2))
      if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || ch == ':' || ch == '.')) return false;
    return true;
  }
  for (char ch : h)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' || ch == '_' || ch == '*'))
      return false;
  return true;
}

}  // namespace

std::string WebOrigin::authority() const {
  return port == default_port(scheme) ? host : host + ":" + std::to_string(port);
}

std::optional<WebOrigin> parse_origin(std::string_view s, bool path_ok) {
  size_t sep = s.find("://");
  if (sep == std::string_view::npos) return std::nullopt;
  WebOrigin o;
  o.scheme = lower(s.substr(0, sep));
  if (o.scheme != "http" && o.scheme != "https") return std::nullopt;
  s.remove_prefix(sep + 3);
  size_t end = s.find_first_of("/?#");
  std::string_view auth = s.substr(0, end), after = end == std::string_view::npos ? "" : s.substr(end);
  if (!path_ok && !after.empty() && after != "/") return std::nullopt;
  if (auth.find('@') != std::string_view::npos) return std::nullopt;
  std::string_view host = auth, port;
  if (!auth.empty() && auth.front() == '[') {
    size_t close = auth.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    host = auth.substr(0, close + 1);
    std::string_view rest = auth.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return std::nullopt;
      port = rest.substr(1);
      if (port.empty()) return std::nullopt;
    }
  } else if (size_t colon = auth.find(':'); colon != std::string_view::npos) {
    host = auth.substr(0, colon);
    port = auth.substr(colon + 1);
    if (port.empty()) return std::nullopt;
  }
  o.host = lower(host);
  if (!host_ok(o.host)) return std::nullopt;
  o.port = default_port(o.scheme);
  if (!port.empty()) {
    if (port.size() > 5) return std::nullopt;
    unsigned n = 0;
    for (char ch : port) {
      if (ch < '0' || ch > '9') return std::nullopt;
      n = n * 10 + static_cast<unsigned>(ch - '0');
    }
    if (n == 0 || n > 65535) return std::nullopt;
    o.port = static_cast<uint16_t>(n);
  }
  return o;
}

bool OriginPattern::matches(const WebOrigin& o) const {
  if (o.scheme != origin.scheme || o.port != origin.port) return false;
  if (!subdomains) return o.host == origin.host;
  return o.host.size() > origin.host.size() && o.host.ends_with(origin.host);
}

std::optional<OriginPattern> parse_origin_pattern(std::string_view s) {
  auto o = parse_origin(s, false);
  if (!o) return std::nullopt;
  OriginPattern p;
  if (o->host.starts_with("*.")) {
    p.subdomains = true;
    o->host.erase(0, 1);  // ".example.com"
  }
  // A wildcard only as the whole first label, over at least one more label.
  if (o->host.find('*') != std::string::npos || o->host == ".") return std::nullopt;
  p.origin = std::move(*o);
  return p;
}

std::optional<WebOrigin> browser_origin(const http::Request& req) {
  std::string_view from = req.header("Origin");
  bool path_ok = false;
  if (from.empty()) {
    from = req.header("Referer");
    path_ok = true;
  }
  if (from.empty()) return std::nullopt;
  auto o = parse_origin(from, path_ok);
  if (!o || o->host.find('*') != std::string::npos) return WebOrigin{};
  return o;
}

bool parse_public_url(std::string_view s, PublicUrl& out, std::string& err) {
  auto o = parse_origin(s, true);
  const size_t auth_end = s.find('/', s.find("://") + 3);
  if (!o || o->host.find('*') != std::string::npos || s.find_first_of("?# ") != std::string_view::npos) {
    err = "'" + std::string(s) + "' is not an http:// or https:// URL (scheme://host[:port][/path])";
    return false;
  }
  out.origin = std::move(*o);
  out.base = out.origin.scheme + "://" + out.origin.authority();
  if (auth_end != std::string_view::npos) {
    std::string_view path = s.substr(auth_end);
    while (!path.empty() && path.back() == '/') path.remove_suffix(1);
    out.base += path;
  }
  return true;
}

bool own_origin(const WebOrigin& o, const http::Request& req, const PublicUrl& pub) {
  if (o.host.empty()) return false;
  if (pub.set() && o == pub.origin) return true;
  return http::iequals(o.authority(), req.header("Host"));
}

}  // namespace oddsrelay::api
