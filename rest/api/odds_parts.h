// Pieces the /v1/odds answers share: the live answer (odds.cc), the book at
// a moment (odds_at.cc) and the history (odds_history.cc) end their bodies
// and refuse a range before what is held the same way.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rest/call.h"

namespace oddsrelay::rest::routes {

// The end of a GET /v1/odds body: `},"not_found":[<the ids, as asked>]}`.
std::string not_found_tail(const std::vector<std::string>& missing);

// 400 {"error":"horizon_exceeded","held_from":<ts>}: what was asked lies
// wholly before the oldest point the history holds.
void refuse_horizon(Call& c, int64_t held_from);

// True with 503 sent (`Retry-After: 1`) while a restart reads the history's
// files back: until then what it holds is not what the log says.
bool history_loading(Call& c);

}  // namespace oddsrelay::rest::routes
