// GET /v1/odds/history?id=: one event's line movement per outcome, read from
// the odds history (engine/history/) under its shared lock: that event's
// points only, cut to from/to, as points or candles, JSON or CSV
// (docs/api.md "Odds history"). The answer's seq is the history's, which may
// trail the snapshot's by the batches its recorder has not applied yet.
// Here: the parameters and the errors; the body is written by
// engine/history/history_answer.h, which `oddsfeed history` shares.
#include <optional>
#include <string>

#include "engine/history/candles.h"
#include "engine/history/history_answer.h"
#include "protocol/api/errors.h"
#include "protocol/event_id.h"
#include "rest/api/handlers.h"
#include "rest/api/odds_parts.h"
#include "rest/params.h"

namespace oddsrelay::rest::routes {

namespace {

// An optional id parameter (a positive 32-bit integer); false with the 400 sent.
bool id_param(Call& c, const char* name, const char* bad, std::optional<uint32_t>& out) {
  auto v = c.param(name);
  if (!v || v->empty()) return true;
  auto n = parse_int(*v);
  if (!n || *n <= 0 || *n > UINT32_MAX) return (c.error(400, bad), false);
  out = static_cast<uint32_t>(*n);
  return true;
}

bool ms_param(Call& c, const char* name, const char* bad, std::optional<int64_t>& out) {
  auto v = c.param(name);
  if (!v || v->empty()) return true;
  out = parse_int(*v);
  if (!out) c.error(400, bad);
  return out.has_value();
}

// The parameters, in the order their errors are checked; false once a 400 is sent.
bool read_query(Call& c, history::HistoryQuery& q) {
  if (!id_param(c, "market", err::kBadHistoryMarket, q.market) ||
      !id_param(c, "outcome", err::kBadHistoryOutcome, q.outcome) ||
      !ms_param(c, "from", err::kBadHistoryFrom, q.from) || !ms_param(c, "to", err::kBadHistoryTo, q.to))
    return false;
  if (q.from && q.to && *q.from > *q.to) return (c.error(400, err::kHistoryFromAfterTo), false);
  if (auto l = c.param("line"); l && !l->empty()) q.line = *l;
  if (auto i = c.param("interval"); i && !i->empty()) {
    auto ms = history::interval_ms(*i);
    if (!ms) return (c.error(400, err::kBadHistoryInterval), false);
    q.interval = *i;
    q.interval_ms = *ms;
  }
  if (auto f = c.param("format"); f && !f->empty()) {
    if (*f != "json" && *f != "csv") return (c.error(400, err::kBadHistoryFormat), false);
    q.csv = *f == "csv";
  }
  return true;
}

}  // namespace

void odds_history(Call& c) {
  auto id = c.param("id");
  if (!id || id->empty()) return c.error(400, err::kMissingId);
  history::HistoryQuery q;
  if (!read_query(c, q)) return;
  if (history_loading(c)) return;
  const ParsedId pid = parse_event_id(*id);
  if (!pid.ok()) return c.error(404, err::kEventNotFound);
  const EventEntry* e = c.snap->events.find(pid.number);
  c.api.inputs.history->read(pid.number, [&](const history::EventHistory* h, const history::HeldState& st) {
    if (!h && !e) return c.error(404, err::kEventNotFound);
    // A range wholly before what is held cannot be answered, not even as empty.
    if (history::before_held(q, st)) return refuse_horizon(c, st.held_from);
    if (q.csv) return c.send_raw(200, "text/csv; charset=utf-8", history::history_csv(q, h));
    c.begin_success();
    history::write_history_json(c.w, q, e ? e->key : h->key(), h, st);
    c.w.EndObject();
    c.send(200);
  });
}

}  // namespace oddsrelay::rest::routes
