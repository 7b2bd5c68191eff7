// POST /rdstn, the legacy batched command format (docs/api.md "Legacy POST /rdstn"):
// a JSON array of [op, args] answered by a flat array with one object per
// requested key, read from one snapshot. Kept for existing backends; the
// op semantics are defined in docs/api.md.
#pragma once

#include <string>
#include <string_view>

#include "engine/core/snapshot.h"
#include "protocol/api/access.h"
#include "rest/rdstn_request.h"
#include "rest/vocabulary.h"

namespace oddsrelay::rest {

// Adds the data the answer to `req` carries (protocol/api/access.h): per key, the
// event's own permission for event objects (live or prematch, by the
// event's state in `snap`), and odds and scores for the {event, odds,
// score} answers of gf and ga. Sport lists need none (counts, as /v1/sports).
void rdstn_needs(const RdstnRequest& req, const Snapshot& snap, Needs& needs);
// Appends the answer: a flat array, one object per requested key. False,
// with `out` cut back to what it held, once the answer passes
// `max_answer` bytes (it stops there: the bytes and the time it costs are
// bounded too).
bool write_rdstn(const RdstnRequest& req, const Snapshot& snap, std::string& out,
                 size_t max_answer = RdstnLimits{}.max_answer);

}  // namespace oddsrelay::rest
