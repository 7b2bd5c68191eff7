#include "rest/call.h"

#include "protocol/api/errors.h"
#include "rest/gzip.h"

namespace oddsrelay::rest {

http::ResponseHead Call::head(int status, std::string_view extra) {
  extra_.assign(headers);
  extra_ += extra;
  http::ResponseHead h;
  h.status = status;
  h.extra = extra_;
  h.keep_alive = req.keep_alive && !close;
  return h;
}

void Call::send_owned(const http::ResponseHead& h, std::string&& bytes) {
  // Below this a copy beside the headers costs less than a piece of its own.
  constexpr size_t kOwnPiece = 16 * 1024;
  if (bytes.size() < kOwnPiece) return http::append_response(out.tail(), h, bytes);
  http::append_head(out.tail(), h, bytes.size());
  out.share(net::make_shared_bytes(std::move(bytes)));
}

void Call::send(int status, std::string_view extra) {
  http::ResponseHead h = head(status, extra);
  if (body.size() > kGzipMin && accepts_gzip()) {
    std::string z;
    if (gzip_compress(body, z)) {
      h.content_encoding = "gzip";
      return send_owned(h, std::move(z));
    }
  }
  send_owned(h, std::move(body));
}

void Call::send_json(int status, std::string_view bytes, std::string_view encoding, std::string_view extra) {
  http::ResponseHead h = head(status, extra);
  h.content_encoding = encoding;
  http::append_response(out.tail(), h, bytes);
}

void Call::send_shared(int status, const net::SharedBytes& bytes, std::string_view encoding, std::string_view extra) {
  http::ResponseHead h = head(status, extra);
  h.content_encoding = encoding;
  http::append_head(out.tail(), h, bytes ? bytes->size() : 0);
  out.share(bytes);
}

void Call::error(int status, std::string_view msg, std::string_view extra) {
  body = err::body(msg);
  send(status, extra);
}

void Call::send_page(std::string_view html) {
  send_raw(200, "text/html; charset=utf-8", html, "Cache-Control: no-cache\r\n");
}

void Call::send_raw(int status, std::string_view content_type, std::string_view raw, std::string_view extra) {
  http::ResponseHead h = head(status, extra);
  h.content_type = content_type;
  http::append_response(out.tail(), h, raw);
}

void Call::add_rate_headers(uint32_t limit, uint32_t remaining, int reset) {
  headers += "X-RateLimit-Limit: " + std::to_string(limit) + "\r\nX-RateLimit-Remaining: " + std::to_string(remaining) +
             "\r\nX-RateLimit-Reset: " + std::to_string(reset) + "\r\n";
}

bool Call::not_modified(std::string_view etag) const {
  std::string_view inm = req.header("If-None-Match");
  if (inm.empty()) return false;
  if (inm == "*") return true;
  // Weak comparison: W/"x" and "x" name the same tag.
  std::string_view opaque = etag.substr(etag.rfind('"', etag.size() - 2));
  return inm.find(opaque) != std::string_view::npos;
}

void Call::send_cached(const net::SharedBytes& plain, const net::SharedBytes& gz, const std::string& etag) {
  const std::string extra = "ETag: " + etag + "\r\nCache-Control: no-cache\r\n";
  if (not_modified(etag)) return send_raw(304, {}, {}, extra);
  if (gz && !gz->empty() && accepts_gzip()) return send_shared(200, gz, "gzip", extra);
  send_shared(200, plain, {}, extra);
}

}  // namespace oddsrelay::rest
