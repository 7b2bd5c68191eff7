// The PROXY protocol, version 1 (the text form): a load balancer that
// passes TCP through (HAProxy, nginx's stream module, cloud balancers)
// writes one line before the client's bytes, naming the client:
//   PROXY TCP4 203.0.113.7 10.0.0.5 51234 443\r\n
// The listener (rest/http_server.cc) looks at the first bytes of every
// connection once. From a peer in --trust-proxy the line is taken off and
// its source address becomes the connection's address (then checked with
// X-Forwarded-For like any trusted hop, rest/client_address.h); from any
// other peer a PROXY line is refused as a bad request, so nobody can claim
// an address by writing one. A connection without the line is plain HTTP.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "rest/client_address.h"

namespace oddsrelay::rest {

inline constexpr size_t kMaxProxyLine = 107;  // the protocol's bound, CRLF included

struct ProxyLine {
  enum class Status { Absent, Incomplete, Complete, Malformed };
  Status status = Status::Absent;
  size_t length = 0;             // Complete: bytes of the line, CRLF included
  std::optional<IpAddr> source;  // Complete: the client; none for "PROXY UNKNOWN"
};

// Reads a PROXY line at the start of `in`. Absent: `in` does not start with
// one (nor with a prefix of "PROXY "). Incomplete: more bytes are needed.
// Malformed: not a valid v1 line (bad protocol, address, port, spacing, or
// no CRLF within kMaxProxyLine bytes).
ProxyLine parse_proxy_line(std::string_view in);

// The listener's step at the start of a connection, before any request.
enum class ProxyStep {
  NeedMore,  // keep reading; call again with more bytes
  Done,      // go on with HTTP: the line, if any, is consumed and `addr` set
  Refused,   // answer 400 with `why` and close
};
// `addr` holds the TCP peer and, after a trusted PROXY line with an
// address, the client it names. `trusted` may be null (none trusted).
ProxyStep take_proxy_line(std::string& in, IpAddr& addr, const TrustedProxies* trusted, const char*& why);

}  // namespace oddsrelay::rest
