// Call: one REST request being answered: the request, the key it was admitted
// with, the snapshot it reads (one per answer, so an answer never mixes two
// versions), the JSON being built, and the few ways an answer is framed
// (JSON with gzip when asked, an error body, a page, a cached encoding).
// Every handler in rest/api/ takes one.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "engine/core/snapshot.h"
#include "protocol/api/api_keys.h"
#include "protocol/api/envelope.h"
#include "protocol/http_request.h"
#include "protocol/http_response.h"
#include "protocol/json_out.h"
#include "protocol/net/out_queue.h"
#include "rest/rdstn.h"
#include "rest/rest_api.h"
#include "rest/vocabulary.h"

namespace oddsrelay::rest {

struct Call {
  Call(const http::Request& r, net::OutQueue& o, RestApi& a, LoopCaches& lc) : req(r), out(o), api(a), cache(lc) {}
  const http::Request& req;
  net::OutQueue& out;           // the connection's unsent answers: bytes are queued once, cached ones by reference
  RestApi& api;                 // the process's, shared by every loop
  LoopCaches& cache;            // this loop's own
  const ApiKey* key = nullptr;  // null on the routes that need none
  SnapshotPtr snap;
  std::optional<RdstnRequest> rdstn;  // /rdstn: the validated commands
  std::string rdstn_error;            // /rdstn: why the body is refused (400)
  std::string body;                   // JSON being built
  json::StringSink sink{body};
  json::Writer w{sink};
  // Header lines every answer of this call carries, each ending in \r\n:
  // the CORS exposure list, then the key's rate-limit state once counted.
  std::string headers = kExposeHeaders;
  bool close = false;  // this answer ends the connection (Connection: close), whatever the request asked

  // The response headers a browser script may read (docs/api.md "CORS").
  static constexpr const char* kExposeHeaders =
      "Access-Control-Expose-Headers: ETag, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, "
      "X-RateLimit-Reset\r\n";
  // The request headers a preflight admits.
  static constexpr const char* kAllowHeaders =
      "Access-Control-Allow-Headers: X-API-Key, Content-Type, If-None-Match\r\n";

  std::optional<std::string> param(std::string_view name) const { return http::query_param(req.query, name); }

  static constexpr size_t kGzipMin = 1024;  // smaller bodies are sent plain: gzip saves less than it costs
  bool accepts_gzip() const { return req.header("Accept-Encoding").find("gzip") != std::string_view::npos; }

  // `body` as the answer, gzip-encoded when it is worth it and accepted.
  void send(int status, std::string_view extra = {});
  // JSON already encoded; `encoding` is "gzip" or empty.
  void send_json(int status, std::string_view bytes, std::string_view encoding, std::string_view extra = {});
  // A cached encoding: the connection queues a reference, never a copy.
  void send_shared(int status, const net::SharedBytes& bytes, std::string_view encoding, std::string_view extra = {});
  // {"error": msg} (protocol/api/errors.h), replacing whatever was built.
  void error(int status, std::string_view msg, std::string_view extra = {});
  // An HTML page, never cached by the browser.
  void send_page(std::string_view html);
  // Any other body as it is (the settlement policy, 204 and 304 answers).
  void send_raw(int status, std::string_view content_type, std::string_view raw, std::string_view extra = {});
  // Whether If-None-Match names `etag` (weak comparison, or "*").
  bool not_modified(std::string_view etag) const;
  // A body encoded once with its gzip form (may be empty) and weak ETag; 304
  // when the client's If-None-Match names that ETag.
  void send_cached(const net::SharedBytes& plain, const net::SharedBytes& gz, const std::string& etag);

  // The rate-limit lines for a counted request (docs/api.md "Rate-limit headers").
  void add_rate_headers(uint32_t limit, uint32_t remaining, int reset);

  void begin_success() { rest::begin_success(w); }

 private:
  http::ResponseHead head(int status, std::string_view extra);
  // A body built for this answer: moved into the queue (no copy) when large.
  void send_owned(const http::ResponseHead& h, std::string&& bytes);
  std::string extra_;  // headers + extra of the answer being framed
};

}  // namespace oddsrelay::rest
