#include "rest/metrics_endpoint.h"

#include "protocol/api/errors.h"
#include "protocol/http_response.h"
#include "rest/gzip.h"
#include "rest/vocabulary.h"

namespace oddsrelay::rest {

namespace {

void append_error(std::string& out, int status, const char* why, bool keep_alive, std::string_view extra = {}) {
  http::ResponseHead h;
  h.status = status;
  h.keep_alive = keep_alive;
  h.extra = extra;
  http::append_response(out, h, std::string("{\"error\":\"") + why + "\"}");
}

}  // namespace

void append_metrics(const metrics::Registry& registry, const http::Request& req, std::string& out) {
  std::string body;
  registry.write(body);
  http::ResponseHead h;
  h.content_type = metrics::kContentType;
  h.keep_alive = req.keep_alive;
  h.extra = "Cache-Control: no-store\r\n";
  std::string z;
  if (body.size() > 1024 && req.header("Accept-Encoding").find("gzip") != std::string_view::npos &&
      gzip_compress(body, z)) {
    h.content_encoding = "gzip";
    http::append_response(out, h, z);
    return;
  }
  http::append_response(out, h, body);
}

void MetricsHandler::handle(const http::Request& req, Peer&, net::OutQueue& queue, Takeover&) {
  std::string& out = queue.tail();
  if (req.path != "/metrics") return append_error(out, 404, err::kNotFound, req.keep_alive);
  if (req.method != "GET") return append_error(out, 405, err::kMethodNotAllowed, req.keep_alive, "Allow: GET\r\n");
  append_metrics(registry_, req, out);
}

void MetricsHandler::refuse(int status, const char* why, std::string& out) { append_error(out, status, why, false); }

}  // namespace oddsrelay::rest
