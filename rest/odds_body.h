// A POST /v1/odds body, parsed (docs/api.md "/v1/odds"): {"sport": <int>,
// "market": <int>, "events": [<event id>, ...]}. Bytes in, a value or the
// 400 text out; no snapshot and no I/O, so the route (rest/api/odds.cc),
// the unit tests and the rest_body fuzz target drive the same code. The
// JSON goes through protocol/json_in.h with the request limits.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace oddsrelay::rest {

struct OddsBody {
  std::optional<int32_t> sport;
  uint32_t market = 0;
  // Each id once, in the order sent; at most `max_ids` + 1 (one more than
  // the limit is enough for the route to refuse it).
  std::vector<std::string> ids;
};

// Parses `body` into `out`; the 400 text when it is not such a body, else empty.
std::string parse_odds_body(std::string_view body, OddsBody& out, size_t max_ids);

}  // namespace oddsrelay::rest
