// /metrics on the REST side: requests counted by route template and status
// from what the handler wrote (bounded labels: unknown paths and codes are
// "other"), rate-limit refusals derived from the 429s, and the metrics
// listener (MetricsHandler) answering GET /metrics in the text format.
#include "rest/request_metrics.h"

#include <gtest/gtest.h>

#include <string>

#include "rest/metrics_endpoint.h"
#include "rest/rest_api.h"
#include "tests/test_util.h"

namespace oddsrelay::rest {
namespace {

// The value of one sample line in an exposition; -1 when absent.
long long sample_value(const std::string& text, const std::string& series) {
  const std::string at = series + " ";
  size_t p = text.find("\n" + at);
  if (p == std::string::npos) return -1;
  return std::stoll(text.substr(p + 1 + at.size()));
}

std::string exposition(uint64_t stream_slots = 0) {
  std::string out;
  metrics::TextWriter w(out);
  write_request_metrics(w, stream_slots);
  return out;
}

TEST(RequestMetrics, CountsByRouteTemplateAndStatus) {
  const uint64_t live200 = requests_counted("/v1/live", 200), other404 = requests_counted("/nowhere", 404),
                 ws101 = requests_counted("/ws", 101), live418 = requests_counted("/v1/live", 418),
                 other431 = requests_counted("other", 431), other200 = requests_counted("other", 200);
  count_response("/v1/live", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", false);
  count_response("/v1/live", "HTTP/1.1 200 OK\r\n\r\n", false);
  count_response("/v1/live?sport=1", "HTTP/1.1 200 OK\r\n\r\n", false);  // a raw target is not a route
  count_response("/anything/else", "HTTP/1.1 404 Not Found\r\n\r\n", false);
  count_response("/ws", "", true);                                         // upgraded: the relay writes the 101
  count_response("/v1/live", "HTTP/1.1 418 I'm a teapot\r\n\r\n", false);  // a code the server never sends
  count_refused(431);
  EXPECT_EQ(requests_counted("/v1/live", 200), live200 + 2);
  EXPECT_EQ(requests_counted("/nowhere", 404), other404 + 1);  // unknown paths are all route "other"
  EXPECT_EQ(requests_counted("other", 200), other200 + 1);
  EXPECT_EQ(requests_counted("/ws", 101), ws101 + 1);
  EXPECT_EQ(requests_counted("/v1/live", 418), live418 + 1);
  EXPECT_EQ(requests_counted("/v1/live", 0), requests_counted("/v1/live", 418));  // 418 is code "other"
  EXPECT_EQ(requests_counted("other", 431), other431 + 1);

  const std::string text = exposition();
  EXPECT_EQ(sample_value(text, "oddsrelay_http_requests_total{route=\"/v1/live\",code=\"200\"}"),
            static_cast<long long>(live200 + 2));
  EXPECT_EQ(sample_value(text, "oddsrelay_http_requests_total{route=\"other\",code=\"404\"}"),
            static_cast<long long>(other404 + 1));
  EXPECT_EQ(sample_value(text, "oddsrelay_http_requests_total{route=\"/v1/live\",code=\"other\"}"),
            static_cast<long long>(live418 + 1));
  EXPECT_EQ(text.find("route=\"/v1/live?sport=1\""), std::string::npos);
  EXPECT_EQ(text.find("route=\"/anything/else\""), std::string::npos);
  // One family, once.
  EXPECT_EQ(text.find("# TYPE oddsrelay_http_requests_total counter\n"),
            text.rfind("# TYPE oddsrelay_http_requests_total counter\n"));
}

TEST(RequestMetrics, RateLimitRefusalsComeFromThe429s) {
  const std::string before = exposition(3);
  const long long req = sample_value(before, "oddsrelay_rate_limited_total{limit=\"requests\"}"),
                  hs = sample_value(before, "oddsrelay_rate_limited_total{limit=\"handshakes\"}");
  ASSERT_GE(req, 0);
  ASSERT_GE(hs, 0);
  EXPECT_EQ(sample_value(before, "oddsrelay_rate_limited_total{limit=\"stream_slots\"}"), 3);
  const std::string_view too_many = "HTTP/1.1 429 Too Many Requests\r\n\r\n";
  count_response("/v1/odds", too_many, false);
  count_response("/v1/status", too_many, false);
  count_response("/pt-ws", too_many, false);
  count_response("/v1/odds", "HTTP/1.1 403 Forbidden\r\n\r\n", false);  // not a rate limit
  const std::string after = exposition(5);
  EXPECT_EQ(sample_value(after, "oddsrelay_rate_limited_total{limit=\"requests\"}"), req + 2);
  EXPECT_EQ(sample_value(after, "oddsrelay_rate_limited_total{limit=\"handshakes\"}"), hs + 1);
  EXPECT_EQ(sample_value(after, "oddsrelay_rate_limited_total{limit=\"stream_slots\"}"), 5);
}

TEST(RequestMetrics, MetricsListenerServesTheRegistryWithoutAKey) {
  metrics::Registry reg;
  reg.add([](metrics::TextWriter& w) { w.single("demo_up", metrics::Type::Gauge, "Up.", uint64_t{1}); });
  MetricsHandler handler(reg);
  HttpServerOptions o;
  o.port = 0;
  HttpServer server(o, handler);
  std::string err;
  ASSERT_TRUE(server.start(err)) << err;
  const uint64_t scrapes = requests_counted("/metrics", 200);
  const std::string got = test::exchange(server.port(),
                                         "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
                                         "GET /v1/status HTTP/1.1\r\nHost: x\r\n\r\n"
                                         "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
                                         "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  server.stop();
  const std::string body = "# HELP demo_up Up.\n# TYPE demo_up gauge\ndemo_up 1\n";
  const std::string ok = "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n";
  // 200, 404, 405, 200 in order, the body the registry wrote.
  std::vector<std::string> codes;
  for (size_t at = got.find("HTTP/1.1 "); at != std::string::npos; at = got.find("HTTP/1.1 ", at + 1))
    codes.push_back(got.substr(at + 9, 3));
  EXPECT_EQ(codes, (std::vector<std::string>{"200", "404", "405", "200"})) << got;
  EXPECT_EQ(got.find(ok), 0u) << got;
  EXPECT_NE(got.find("\r\n\r\n" + body + "HTTP/1.1 404"), std::string::npos) << got;
  EXPECT_NE(got.find("Allow: GET\r\n"), std::string::npos);
  EXPECT_EQ(got.size() - got.rfind(body), body.size());  // the last answer ends with the body
  EXPECT_EQ(requests_counted("/metrics", 200), scrapes + 2);
}

TEST(RequestMetrics, EveryRouteHasItsOwnLabel) {
  // A route added to the router but not to the metrics' label list would be
  // counted as "other": every path of the router's table counts as itself.
  const std::vector<std::string_view> paths = route_paths();
  ASSERT_GT(paths.size(), 20u);
  for (std::string_view path : paths) {
    const uint64_t before = requests_counted(path, 200), other = requests_counted("other", 200);
    count_response(path, "HTTP/1.1 200 OK\r\n\r\n", false);
    EXPECT_EQ(requests_counted(path, 200), before + 1) << path;
    EXPECT_EQ(requests_counted("other", 200), other) << path << " is counted as other";
  }
}

}  // namespace
}  // namespace oddsrelay::rest
