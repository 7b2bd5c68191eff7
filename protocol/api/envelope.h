// The envelope of every successful answer of the interface:
// {"success": true, ...}, written here only, like the error bodies
// (protocol/api/errors.h). REST's per-request answers (rest/call.h) and its
// cached ones (rest/catalog_views.cc, rest/api/lists.cc) open it alike.
#pragma once

#include <string>

#include "protocol/json_out.h"

namespace oddsrelay::api {

// Opens the envelope; the caller writes the rest and closes it.
inline void begin_success(json::Writer& w) {
  w.StartObject();
  w.Key("success");
  w.Bool(true);
}

// A whole successful answer as a string: `members` writes what follows "success".
template <class F>
std::string success_body(F&& members) {
  std::string out;
  json::StringSink sink(out);
  json::Writer w(sink);
  begin_success(w);
  members(w);
  w.EndObject();
  return out;
}

}  // namespace oddsrelay::api
