// The error bodies of docs/api.md "Authentication order and errors": built
// here only, so every route answers the same shape.
#include "protocol/api/errors.h"

#include "protocol/json_out.h"

namespace oddsrelay::api::err {

std::string bad_flag(std::string_view name) { return "Invalid " + std::string(name) + " parameter: expected 0 or 1"; }

std::string bad_body(std::string_view why) { return "Invalid body: " + std::string(why); }

std::string body(std::string_view msg) {
  return json::object([&](json::Writer& w) {
    w.Key("error");
    json::str(w, msg);
  });
}

std::string rate_limited(std::string_view msg, uint32_t limit, int window_s, int retry_after) {
  return json::object([&](json::Writer& w) {
    w.Key("error");
    json::str(w, msg);
    w.Key("limit");
    w.Uint(limit);
    w.Key("window");
    json::str(w, std::to_string(window_s) + "s");
    w.Key("retry_after");
    w.Int(retry_after);
  });
}

}  // namespace oddsrelay::api::err
