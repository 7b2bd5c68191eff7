// Web origins (scheme://host[:port]) for the server's browser-side rules:
// a key's allow_origins (docs/api.md "API keys": which web pages may use
// the key from a browser), the explorer's demo key that works only from
// this server's own pages, and --public-url, the base of the URLs the
// server hands out. The router (rest/router.cc) asks these after the key
// and source address checks. A browser guard only: a client outside a
// browser sends whatever Origin it likes, or none.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/http_request.h"

namespace oddsrelay::api {

struct WebOrigin {
  std::string scheme;  // "http" or "https"
  std::string host;    // lowercase; an IPv6 address in brackets
  uint16_t port = 0;   // as written, else the scheme's default (80, 443)
  bool operator==(const WebOrigin&) const = default;
  // host, with ":port" when it is not the scheme's default (as a browser
  // writes the Host header).
  std::string authority() const;
};

// "https://Desk.Example.com" → {https, desk.example.com, 443}. Only http
// and https; no user info. `path_ok`: anything after the authority (a
// Referer's path) is ignored; otherwise at most a single '/' may follow.
std::optional<WebOrigin> parse_origin(std::string_view s, bool path_ok);

// One allow_origins entry: an exact origin, or "https://*.example.com",
// which admits every host under example.com (at any depth) but not
// example.com itself. Scheme and port must match too.
struct OriginPattern {
  WebOrigin origin;  // for a wildcard, host is the suffix ".example.com"
  bool subdomains = false;
  bool matches(const WebOrigin& o) const;
};
std::optional<OriginPattern> parse_origin_pattern(std::string_view s);

// Where a browser says a request comes from: its Origin header, else the
// origin of its Referer (a page load, such as the widget's iframe, carries
// no Origin). nullopt: neither header, not a browser request. An origin
// that cannot be read ("null" from a sandboxed frame or a file) is an empty
// WebOrigin, which no pattern matches.
std::optional<WebOrigin> browser_origin(const http::Request& req);

// --public-url: where clients reach this server (a TLS-terminating proxy's
// https:// address), the base of the URLs it hands out.
struct PublicUrl {
  std::string base;  // "https://odds.example.com[/prefix]", no trailing '/'; empty: not set
  WebOrigin origin;
  bool set() const { return !base.empty(); }
};
// False with `err` for anything but http[s]://host[:port][/path] (no query,
// no fragment).
bool parse_public_url(std::string_view s, PublicUrl& out, std::string& err);

// Whether `o` is one of this server's own pages (the explorer, the widget):
// its authority is the request's Host, or it is the --public-url origin.
bool own_origin(const WebOrigin& o, const http::Request& req, const PublicUrl& pub);

}  // namespace oddsrelay::api
