// Who a request comes from when the server runs behind a reverse proxy
// (--trust-proxy, docs/deploy.md). The connection's peer is one of our
// proxies only when it lies in a trusted network; then, and only then, the
// addresses that proxy reports are believed: the PROXY protocol line at the
// start of the connection (rest/proxy_protocol.h, read by the listener) and
// X-Forwarded-For (read here, per request). The address found is what the
// router checks a key's allow_ips against, for REST calls and stream
// handshakes alike (rest/router.cc).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/api/api_keys.h"
#include "protocol/http_request.h"
#include "rest/vocabulary.h"

namespace oddsrelay::rest {

using IpAddr = std::array<uint8_t, 16>;  // v4 as v4-mapped v6, as Cidr holds it

// The --trust-proxy networks; empty: no proxy is trusted (the default).
class TrustedProxies {
 public:
  // "CIDR[,CIDR...]"; an address without a prefix is one host. False with
  // `err` naming the bad entry.
  static bool parse(std::string_view list, TrustedProxies& out, std::string& err);
  bool contains(const IpAddr& ip) const;
  bool empty() const { return nets_.empty(); }
  size_t size() const { return nets_.size(); }

 private:
  std::vector<Cidr> nets_;
};

// The client address of `req` arriving from `peer`. An untrusted peer is
// the client, whatever the request says. From a trusted one, the
// X-Forwarded-For entries (every such header, in order, as one list) are
// walked from the right: each trusted address is a proxy of ours and is
// skipped, the first one that is not is the client. An entry that is not an
// address ends the walk at the proxy that passed it on; when every entry is
// trusted the left-most one is taken. Entries may carry a port
// ("203.0.113.7:5050", "[2001:db8::1]:443").
IpAddr client_address(const IpAddr& peer, const http::Request& req, const TrustedProxies& trusted);

// One X-Forwarded-For entry as an address, or nullopt.
std::optional<IpAddr> parse_forwarded_entry(std::string_view entry);

// "203.0.113.7" (v4-mapped shown as v4) or "2001:db8::1".
std::string format_ip(const IpAddr& ip);

}  // namespace oddsrelay::rest
