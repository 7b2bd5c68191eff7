#include "rest/proxy_protocol.h"

#include "protocol/api/errors.h"

namespace oddsrelay::rest {

namespace {

constexpr std::string_view kPrefix = "PROXY ";

// The next space-separated field of `s` (single spaces only).
bool field(std::string_view& s, std::string_view& out, bool last) {
  size_t sp = s.find(' ');
  if (last) {
    if (sp != std::string_view::npos) return false;
    out = s;
    s = {};
  } else {
    if (sp == std::string_view::npos) return false;
    out = s.substr(0, sp);
    s.remove_prefix(sp + 1);
  }
  return !out.empty();
}

bool port(std::string_view p) {
  if (p.empty() || p.size() > 5) return false;
  unsigned n = 0;
  for (char ch : p) {
    if (ch < '0' || ch > '9') return false;
    n = n * 10 + static_cast<unsigned>(ch - '0');
  }
  return n <= 65535;
}

std::optional<IpAddr> address(std::string_view a, bool v6) {
  if ((a.find(':') != std::string_view::npos) != v6) return std::nullopt;  // TCP4 carries v4, TCP6 v6
  return parse_ip(a);
}

}  // namespace

ProxyLine parse_proxy_line(std::string_view in) {
  ProxyLine r;
  if (in.size() < kPrefix.size()) {
    r.status = kPrefix.starts_with(in) && !in.empty() ? ProxyLine::Status::Incomplete : ProxyLine::Status::Absent;
    return r;
  }
  if (!in.starts_with(kPrefix)) return r;
  size_t crlf = in.substr(0, kMaxProxyLine).find("\r\n");
  if (crlf == std::string_view::npos) {
    r.status = in.size() >= kMaxProxyLine ? ProxyLine::Status::Malformed : ProxyLine::Status::Incomplete;
    return r;
  }
  r.status = ProxyLine::Status::Malformed;
  std::string_view rest = in.substr(kPrefix.size(), crlf - kPrefix.size());
  if (rest == "UNKNOWN" || rest.starts_with("UNKNOWN ")) {  // the balancer does not know: keep the peer
    r.status = ProxyLine::Status::Complete;
    r.length = crlf + 2;
    return r;
  }
  std::string_view proto, src, dst, sport, dport;
  if (!field(rest, proto, false) || (proto != "TCP4" && proto != "TCP6")) return r;
  if (!field(rest, src, false) || !field(rest, dst, false) || !field(rest, sport, false) || !field(rest, dport, true))
    return r;
  const bool v6 = proto == "TCP6";
  auto s = address(src, v6);
  if (!s || !address(dst, v6) || !port(sport) || !port(dport)) return r;
  r.status = ProxyLine::Status::Complete;
  r.length = crlf + 2;
  r.source = s;
  return r;
}

ProxyStep take_proxy_line(std::string& in, IpAddr& addr, const TrustedProxies* trusted, const char*& why) {
  ProxyLine p = parse_proxy_line(in);
  if (p.status == ProxyLine::Status::Absent) return ProxyStep::Done;
  const bool from_proxy = trusted && trusted->contains(addr);
  // From anyone else a PROXY line is a claim we must not believe, and not
  // HTTP either: refused as soon as "PROXY " is seen.
  if (!from_proxy && in.size() >= kPrefix.size()) {
    why = err::kProxyLineUntrusted;
    return ProxyStep::Refused;
  }
  switch (p.status) {
    case ProxyLine::Status::Incomplete:
      return ProxyStep::NeedMore;
    case ProxyLine::Status::Malformed:
      why = err::kBadProxyLine;
      return ProxyStep::Refused;
    default:
      break;
  }
  if (p.source) addr = *p.source;
  in.erase(0, p.length);
  return ProxyStep::Done;
}

}  // namespace oddsrelay::rest
