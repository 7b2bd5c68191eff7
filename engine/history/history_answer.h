// The body of an odds-history answer (docs/api.md "Odds history"): one
// event's points, cut to a query's from/to and filters, as points or
// candles, JSON or CSV. Written here once for the two that answer the
// question: GET /v1/odds/history (rest/api/odds_history.cc, which parses
// the parameters and reads the store under its lock) and `oddsfeed
// history` (tools/oddsfeed/history_command.cc, which builds the store from
// a capture), so the tool's answer is the server's byte for byte.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engine/history/event_history.h"
#include "engine/history/history_store.h"
#include "protocol/json_out.h"

namespace oddsrelay::history {

// What an answer is asked, already checked (from <= to, a known interval).
struct HistoryQuery {
  std::optional<uint32_t> market, outcome;
  std::optional<std::string> line;
  std::optional<int64_t> from, to;
  std::string interval = "raw";
  int64_t interval_ms = 0;  // 0: raw points
  bool csv = false;
};

// A range wholly before what is held cannot be answered, not even as empty
// (the answer is the horizon refusal instead).
inline bool before_held(const HistoryQuery& q, const HeldState& st) {
  return st.held_from && q.to && *q.to < st.held_from;
}

// The JSON answer's members after "success": id (as the answer names the
// event), epoch, seq, from, to, interval, held_from_seq, held_from, data. `h` may be null
// (an event the book holds that made no point yet): data is then empty.
void write_history_json(json::Writer& w, const HistoryQuery& q, std::string_view id, const EventHistory* h,
                        const HeldState& st);

// The CSV answer: a header row, then one row a point (raw) or a candle.
std::string history_csv(const HistoryQuery& q, const EventHistory* h);

}  // namespace oddsrelay::history
