// The PROXY protocol v1 line: its parser, and the listener taking it off a
// trusted proxy's connection (the client it names is the Peer the handler
// sees) while refusing it from anyone else.
#include "rest/proxy_protocol.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "protocol/api/errors.h"
#include "protocol/http_response.h"
#include "rest/http_server.h"
#include "rest/request_metrics.h"

namespace oddsrelay::rest {
namespace {

using S = ProxyLine::Status;

TEST(ProxyLine, ReadsTcp4Tcp6AndUnknown) {
  std::string in = "PROXY TCP4 198.51.100.7 10.0.0.5 51234 443\r\nGET / HTTP/1.1\r\n";
  ProxyLine p = parse_proxy_line(in);
  ASSERT_EQ(p.status, S::Complete);
  EXPECT_EQ(p.length, in.find("GET"));
  EXPECT_EQ(format_ip(*p.source), "198.51.100.7");

  p = parse_proxy_line("PROXY TCP6 2001:db8::7 2001:db8::1 65535 0\r\n");
  ASSERT_EQ(p.status, S::Complete);
  EXPECT_EQ(format_ip(*p.source), "2001:db8::7");

  p = parse_proxy_line("PROXY UNKNOWN\r\nGET");
  ASSERT_EQ(p.status, S::Complete);
  EXPECT_EQ(p.length, 15u);
  EXPECT_FALSE(p.source);
  p = parse_proxy_line("PROXY UNKNOWN ffff::1 ffff::2 1 2\r\n");
  EXPECT_EQ(p.status, S::Complete);
  EXPECT_FALSE(p.source);
}

TEST(ProxyLine, AbsentIncompleteAndMalformed) {
  EXPECT_EQ(parse_proxy_line("GET / HTTP/1.1\r\n").status, S::Absent);
  EXPECT_EQ(parse_proxy_line("POST").status, S::Absent);
  EXPECT_EQ(parse_proxy_line("").status, S::Absent);
  EXPECT_EQ(parse_proxy_line("P").status, S::Incomplete);
  EXPECT_EQ(parse_proxy_line("PROX").status, S::Incomplete);
  EXPECT_EQ(parse_proxy_line("PROXY TCP4 198.51.100.7 10.0.0.5 5").status, S::Incomplete);
  EXPECT_EQ(parse_proxy_line("PROXY TCP4 198.51.100.7 10.0.0.5 51234 443\r").status, S::Incomplete);
  for (const char* bad : {
           "PROXY TCP4 198.51.100.7 10.0.0.5 51234\r\n",         // a field missing
           "PROXY TCP4 198.51.100.7 10.0.0.5 51234 443 9\r\n",   // one too many
           "PROXY TCP4  198.51.100.7 10.0.0.5 51234 443\r\n",    // two spaces
           "PROXY TCP4 2001:db8::7 10.0.0.5 51234 443\r\n",      // v6 under TCP4
           "PROXY TCP6 198.51.100.7 2001:db8::1 51234 443\r\n",  // v4 under TCP6
           "PROXY TCP4 198.51.100.7 10.0.0.5 65536 443\r\n",     // port out of range
           "PROXY TCP4 198.51.100.7 10.0.0.5 5x 443\r\n",
           "PROXY UDP4 198.51.100.7 10.0.0.5 51234 443\r\n",
           "PROXY TCP4 host.example 10.0.0.5 51234 443\r\n",
       })
    EXPECT_EQ(parse_proxy_line(bad).status, S::Malformed) << bad;
  // No CRLF within the protocol's 107 bytes.
  EXPECT_EQ(parse_proxy_line("PROXY TCP4 " + std::string(100, '1')).status, S::Malformed);
  EXPECT_EQ(parse_proxy_line("PROXY TCP4 " + std::string(95, '1')).status, S::Incomplete);
}

TEST(ProxyLine, TakenFromATrustedPeerOnly) {
  TrustedProxies t;
  std::string err;
  ASSERT_TRUE(TrustedProxies::parse("127.0.0.1/32", t, err));
  const IpAddr proxy = *parse_ip("127.0.0.1"), other = *parse_ip("127.0.0.2");
  const char* why = "";

  std::string in = "PROXY TCP4 198.51.100.7 127.0.0.1 5000 80\r\nGET";
  IpAddr a = proxy;
  ASSERT_EQ(take_proxy_line(in, a, &t, why), ProxyStep::Done);
  EXPECT_EQ(in, "GET");
  EXPECT_EQ(format_ip(a), "198.51.100.7");

  in = "PROXY UNKNOWN\r\nGET";  // the balancer does not know: the peer stays
  a = proxy;
  ASSERT_EQ(take_proxy_line(in, a, &t, why), ProxyStep::Done);
  EXPECT_EQ((in), "GET");
  EXPECT_EQ(format_ip(a), "127.0.0.1");

  in = "PROXY TCP4 198.51.100.7 127.0.0.1 5000 80\r\nGET";
  a = other;
  ASSERT_EQ(take_proxy_line(in, a, &t, why), ProxyStep::Refused);
  EXPECT_STREQ(why, err::kProxyLineUntrusted);
  EXPECT_EQ(format_ip(a), "127.0.0.2");
  a = proxy;
  ASSERT_EQ(take_proxy_line(in, a, nullptr, why), ProxyStep::Refused);  // nothing trusted
  EXPECT_STREQ(why, err::kProxyLineUntrusted);

  in = "PROXY TCP4 198.51.100.7 127.0.0.1 99999 80\r\n";
  a = proxy;
  ASSERT_EQ(take_proxy_line(in, a, &t, why), ProxyStep::Refused);
  EXPECT_STREQ(why, err::kBadProxyLine);

  in = "PROXY TCP4 198.5";
  EXPECT_EQ(take_proxy_line(in, a, &t, why), ProxyStep::NeedMore);
  a = other;  // an untrusted peer is refused as soon as "PROXY " is seen
  EXPECT_EQ(take_proxy_line(in, a, &t, why), ProxyStep::Refused);
  in = "PROX";
  EXPECT_EQ(take_proxy_line(in, a, &t, why), ProxyStep::NeedMore);
  in = "GET / HTTP/1.1\r\n";
  EXPECT_EQ(take_proxy_line(in, a, &t, why), ProxyStep::Done);
  EXPECT_EQ(in, "GET / HTTP/1.1\r\n");
}

// Answers with the address the listener says the connection comes from.
class EchoPeer : public HttpHandler {
 public:
  void handle(const http::Request& req, Peer& peer, net::OutQueue& out, Takeover&) override {
    http::ResponseHead h;
    h.keep_alive = req.keep_alive;
    http::append_response(out.tail(), h, "peer=" + format_ip(peer.ip));
  }
  void refuse(int status, const char* why, std::string& out) override {
    http::ResponseHead h;
    h.status = status;
    h.keep_alive = false;
    http::append_response(out, h, std::string("error=") + why);
  }
};

// Sends `bytes` from 127.0.0.1 (split in two writes at `split`) and reads
// until the server closes.
std::string exchange(uint16_t port, const std::string& bytes, size_t split) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{10, 0};  // fails the test only if the server never answers
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  split = std::min(split, bytes.size());
  EXPECT_EQ(::send(fd, bytes.data(), split, 0), static_cast<ssize_t>(split));
  if (split < bytes.size()) {
    usleep(20'000);  // the first part is read on its own most of the time; either way the answer is the same
    EXPECT_EQ(::send(fd, bytes.data() + split, bytes.size() - split, 0), static_cast<ssize_t>(bytes.size() - split));
  }
  std::string got;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) got.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return got;
}

std::string body(const std::string& response) {
  size_t at = response.find("\r\n\r\n");
  return at == std::string::npos ? "" : response.substr(at + 4);
}

struct Listener {
  explicit Listener(const char* trusted) {
    std::string err;
    EXPECT_TRUE(TrustedProxies::parse(trusted, trust, err)) << err;
    HttpServerOptions o;
    o.port = 0;
    o.trusted_proxies = &trust;
    server = std::make_unique<HttpServer>(o, handler);
    EXPECT_TRUE(server->start(err)) << err;
  }
  TrustedProxies trust;
  EchoPeer handler;
  std::unique_ptr<HttpServer> server;
};

const std::string kGet = "GET /ip HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
const std::string kLine = "PROXY TCP4 198.51.100.7 127.0.0.1 5000 80\r\n";

TEST(ProxyLineListener, ATrustedProxysClientIsThePeer) {
  Listener l("127.0.0.1/32");
  const uint16_t port = l.server->port();
  std::string r = exchange(port, kLine + kGet, std::string::npos);
  EXPECT_EQ(r.rfind("HTTP/1.1 200 ", 0), 0u) << r;
  EXPECT_EQ(body(r), "peer=198.51.100.7");
  // The line in pieces (cut inside it, then inside the request).
  EXPECT_EQ(body(exchange(port, kLine + kGet, 9)), "peer=198.51.100.7");
  EXPECT_EQ(body(exchange(port, kLine + kGet, kLine.size() + 3)), "peer=198.51.100.7");
  // Without a line the TCP peer is the connection's address.
  EXPECT_EQ(body(exchange(port, kGet, std::string::npos)), "peer=127.0.0.1");
  // A line later on the connection is not at its start: the HTTP parser
  // refuses it like any bad request.
  r = exchange(port, "GET /ip HTTP/1.1\r\nHost: t\r\n\r\n" + kLine + kGet, std::string::npos);
  EXPECT_NE(r.find("peer=127.0.0.1"), std::string::npos) << r;
  EXPECT_EQ(r.find("198.51.100.7"), std::string::npos) << r;
  // A malformed line from the proxy: 400 and closed.
  r = exchange(port, "PROXY TCP4 198.51.100.7 127.0.0.1 5000\r\n" + kGet, std::string::npos);
  EXPECT_EQ(r.rfind("HTTP/1.1 400 ", 0), 0u) << r;
  EXPECT_EQ(body(r), std::string("error=") + err::kBadProxyLine);
  EXPECT_EQ(l.server->requests(), 5u);  // the refused connection's request was never read
}

TEST(ProxyLineListener, AnUntrustedPeersLineIsABadRequest) {
  Listener l("10.0.0.0/8");  // 127.0.0.1 is not a proxy of ours
  const uint64_t refused_before = requests_counted("other", 400);
  std::string r = exchange(l.server->port(), kLine + kGet, std::string::npos);
  EXPECT_EQ(r.rfind("HTTP/1.1 400 ", 0), 0u) << r;
  EXPECT_EQ(body(r), std::string("error=") + err::kProxyLineUntrusted);
  EXPECT_EQ(r.find("peer="), std::string::npos) << r;
  EXPECT_EQ(l.server->requests(), 0u);
  EXPECT_EQ(requests_counted("other", 400), refused_before + 1);  // counted like the parser's refusals
  EXPECT_EQ(body(exchange(l.server->port(), kGet, std::string::npos)), "peer=127.0.0.1");
}

}  // namespace
}  // namespace oddsrelay::rest
