#include "rest/call.h"

#include "protocol/http_response.h"
#include "rest/errors.h"
#include "rest/gzip.h"

namespace oddsrelay::rest {

namespace {
constexpr size_t kGzipMin = 1024;  // below this gzip saves less than it costs
}

void Call::send(int status, std::string_view extra) {
  http::ResponseHead h;
  h.status = status;
  h.extra = extra;
  h.keep_alive = req.keep_alive;
  std::string_view accept = req.header("Accept-Encoding");
  if (body.size() > kGzipMin && accept.find("gzip") != std::string_view::npos) {
    std::string z;
    if (gzip_compress(body, z)) {
      h.content_encoding = "gzip";
      http::append_response(out, h, z);
      return;
    }
  }
  http::append_response(out, h, body);
}

void Call::error(int status, std::string_view msg, std::string_view extra) {
  body = err::body(msg);
  send(status, extra);
}

void Call::send_page(std::string_view html) {
  http::ResponseHead h;
  h.content_type = "text/html; charset=utf-8";
  h.keep_alive = req.keep_alive;
  h.extra = "Cache-Control: no-cache\r\n";
  http::append_response(out, h, html);
}

void Call::send_cached(const std::string& plain, const std::string& gz, const std::string& etag) {
  std::string extra = "ETag: " + etag + "\r\nCache-Control: no-cache\r\n";
  std::string_view inm = req.header("If-None-Match");
  http::ResponseHead h;
  h.extra = extra;
  h.keep_alive = req.keep_alive;
  if (!inm.empty() && (inm == "*" || inm.find(etag) != std::string_view::npos ||
                       inm.find(std::string_view(etag).substr(2)) != std::string_view::npos)) {
    h.status = 304;
    http::append_response(out, h, {});
    return;
  }
  if (!gz.empty() && req.header("Accept-Encoding").find("gzip") != std::string_view::npos) {
    h.content_encoding = "gzip";
    http::append_response(out, h, gz);
  } else {
    http::append_response(out, h, plain);
  }
}

}  // namespace oddsrelay::rest
