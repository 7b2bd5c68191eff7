// One REST request being answered: the request, the key it was admitted
// with, the snapshot it reads (one per answer, so an answer never mixes two
// versions), the JSON being built, and the few ways an answer is framed
// (JSON with gzip when asked, an error body, a page, a cached encoding).
// Every handler in rest/api/ takes one.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "engine/snapshot.h"
#include "protocol/http_request.h"
#include "protocol/json_out.h"
#include "rest/api_keys.h"
#include "rest/rdstn.h"
#include "rest/rest_state.h"

namespace oddsrelay::rest {

struct Call {
  Call(const http::Request& r, std::string& o, RestState& s) : req(r), out(o), st(s) {}
  const http::Request& req;
  std::string& out;
  RestState& st;
  const ApiKey* key = nullptr;  // null on the routes that need none
  SnapshotPtr snap;
  std::optional<RdstnRequest> rdstn;  // /rdstn: the validated commands
  std::string rdstn_error;            // /rdstn: why the body is refused (400)
  std::string body;                   // JSON being built
  json::StringSink sink{body};
  json::Writer w{sink};

  std::optional<std::string> param(std::string_view name) const { return http::query_param(req.query, name); }

  // `body` as the answer, gzip-encoded when it is worth it and accepted.
  void send(int status, std::string_view extra = {});
  // {"error": msg} (rest/errors.h), replacing whatever was built.
  void error(int status, std::string_view msg, std::string_view extra = {});
  // An HTML page, never cached by the browser.
  void send_page(std::string_view html);
  // A body encoded once with its gzip form (may be empty) and weak ETag; 304
  // when the client's If-None-Match names that ETag.
  void send_cached(const std::string& plain, const std::string& gz, const std::string& etag);

  void begin_success() {
    w.StartObject();
    w.Key("success");
    w.Bool(true);
  }
};

}  // namespace oddsrelay::rest
