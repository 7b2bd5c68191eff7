#include "rest/client_address.h"

#include <arpa/inet.h>

#include <cstring>

#include "protocol/http_request.h"

namespace oddsrelay::rest {

namespace {

using http::trim_ows;

}  // namespace

bool TrustedProxies::parse(std::string_view list, TrustedProxies& out, std::string& err) {
  out.nets_.clear();
  while (true) {
    size_t comma = list.find(',');
    std::string_view item = trim_ows(list.substr(0, comma));
    auto c = item.empty() ? std::nullopt : parse_cidr(item);
    if (!c) {
      err = "'" + std::string(item) + "' is not an address or CIDR";
      return false;
    }
    out.nets_.push_back(*c);
    if (comma == std::string_view::npos) return true;
    list.remove_prefix(comma + 1);
  }
}

bool TrustedProxies::contains(const IpAddr& ip) const {
  for (const Cidr& c : nets_)
    if (c.contains(ip)) return true;
  return false;
}

std::optional<IpAddr> parse_forwarded_entry(std::string_view e) {
  e = trim_ows(e);
  if (!e.empty() && e.front() == '[') {  // [v6] or [v6]:port
    size_t close = e.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    std::string_view after = e.substr(close + 1);
    if (!after.empty() && after.front() != ':') return std::nullopt;
    e = e.substr(1, close - 1);
  } else if (size_t colon = e.find(':');
             colon != std::string_view::npos && e.find(':', colon + 1) == std::string_view::npos) {
    e = e.substr(0, colon);  // v4:port (a v6 address has at least two colons)
  }
  if (e.empty() || e.find('/') != std::string_view::npos) return std::nullopt;
  return parse_ip(e);
}

IpAddr client_address(const IpAddr& peer, const http::Request& req, const TrustedProxies& trusted) {
  if (trusted.empty() || !trusted.contains(peer)) return peer;
  // Entries of every X-Forwarded-For line, left to right; a proxy chain
  // appends, so the right end is nearest to us.
  std::vector<std::string_view> entries;
  for (const http::Header& h : req.headers) {
    if (!http::iequals(h.name, "X-Forwarded-For")) continue;
    for (std::string_view v = h.value;;) {
      size_t comma = v.find(',');
      std::string_view item = trim_ows(v.substr(0, comma));
      if (!item.empty()) entries.push_back(item);
      if (comma == std::string_view::npos) break;
      v.remove_prefix(comma + 1);
    }
  }
  IpAddr client = peer;
  for (size_t i = entries.size(); i-- > 0;) {
    auto ip = parse_forwarded_entry(entries[i]);
    if (!ip) return client;  // garbage: believe no further than the proxy that passed it on
    client = *ip;
    if (!trusted.contains(client)) return client;
  }
  return client;
}

std::string format_ip(const IpAddr& ip) {
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  char buf[INET6_ADDRSTRLEN] = {};
  if (std::memcmp(ip.data(), kMapped, sizeof kMapped) == 0)
    inet_ntop(AF_INET, ip.data() + 12, buf, sizeof buf);
  else
    inet_ntop(AF_INET6, ip.data(), buf, sizeof buf);
  return buf;
}

}  // namespace oddsrelay::rest
