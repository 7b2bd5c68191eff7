#include "rest/api/odds_parts.h"

#include "protocol/api/errors.h"
#include "protocol/json_out.h"

namespace oddsrelay::rest::routes {

std::string not_found_tail(const std::vector<std::string>& missing) {
  std::string t = "},\"not_found\":[";
  for (size_t i = 0; i < missing.size(); ++i) {
    if (i) t += ',';
    json::StringSink sink(t);
    json::Writer w(sink);
    json::str(w, missing[i]);
  }
  t += "]}";
  return t;
}

void refuse_horizon(Call& c, int64_t held_from) {
  c.body = json::object([&](json::Writer& w) {
    w.Key("error");
    json::str(w, err::kHorizonExceeded);
    w.Key("held_from");
    w.Int64(held_from);
  });
  c.send(400);
}

bool history_loading(Call& c) {
  const auto& loading = c.api.inputs.history_loading;
  if (!loading || !loading()) return false;
  c.error(503, err::kHistoryLoading, "Retry-After: 1\r\n");
  return true;
}

}  // namespace oddsrelay::rest::routes
