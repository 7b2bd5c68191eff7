// A POST /rdstn body, parsed and validated (docs/api.md "Legacy POST /rdstn"):
// a JSON array of [op, args] commands, every one checked before any is
// answered. Bytes in, a request or the 400 text out; no snapshot and no
// I/O, so the route (rest/rdstn.h answers it), the unit tests and the
// rest_body fuzz target drive the same code. The JSON goes through
// protocol/json_in.h with the request limits.
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <string_view>

namespace oddsrelay::rest {

struct RdstnLimits {
  size_t max_commands = 50;
  size_t max_keys = 200;  // over all commands
  // The answer's bytes: a 2 KB body of 200 `ga` keys naming one sport's list
  // (or the same list under 200 bookmaker indexes) would otherwise build 200
  // copies of it, 25 MB of the simulator's book, per request.
  size_t max_answer = 16 << 20;
};

enum class RdstnOp { Get, Full, All, IfChanged, SportsLive, SportsPre };

// "g", "gf", "ga", "go", "sl", "sp"; false for anything else.
bool parse_op(std::string_view s, RdstnOp& op);

// A request body that passed validation: the command array.
struct RdstnRequest {
  rapidjson::Document doc;
};

// Parses and validates `body` (every command before any is answered);
// false with `error` set for a 400.
bool parse_rdstn(std::string_view body, RdstnRequest& req, std::string& error, RdstnLimits limits = {});

}  // namespace oddsrelay::rest
