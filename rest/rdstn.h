// POST /rdstn, the legacy batched command format (SPEC.md "POST /rdstn"):
// a JSON array of [op, args] answered by a flat array with one object per
// requested key, read from one snapshot. Kept for existing backends; the
// op semantics SPEC.md leaves open are defined in docs/api.md.
#pragma once

#include <string>
#include <string_view>

#include "engine/snapshot.h"

namespace oddsrelay::rest {

struct RdstnLimits {
  size_t max_commands = 50;
  size_t max_keys = 200;  // over all commands
};

// Appends the response JSON to `out` and returns 200, or returns 400 with
// `error` set (and nothing appended). `with_odds`: the key may read prices.
int answer_rdstn(std::string_view body, const Snapshot& snap, bool with_odds, std::string& out, std::string& error,
                 RdstnLimits limits = {});

}  // namespace oddsrelay::rest
