// GET /v1/odds/history?id=: one event's line movement per outcome, read from
// the odds history (engine/history/) under its shared lock: that event's
// points only, cut to from/to, as points or candles, JSON or CSV
// (docs/api.md "Odds history"). The answer's seq is the history's, which may
// trail the snapshot's by the batches its recorder has not applied yet.
#include <optional>
#include <string>
#include <vector>

#include "engine/history/candles.h"
#include "protocol/api/errors.h"
#include "protocol/event_id.h"
#include "rest/api/handlers.h"
#include "rest/api/odds_parts.h"
#include "rest/params.h"

namespace oddsrelay::rest::routes {

namespace {

using history::Candle;
using history::OutcomeHistory;
using history::Point;

struct Query {
  uint64_t number = 0;
  std::optional<uint32_t> market, outcome;
  std::optional<std::string> line;
  std::optional<int64_t> from, to;
  std::string interval = "raw";
  int64_t interval_ms = 0;
  bool csv = false;
};

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
bool read_query(Call& c, Query& q) {
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

bool wanted(const Query& q, const OutcomeHistory& o) {
  return (!q.market || o.key.market == *q.market) && (!q.line || o.key.line.view() == *q.line) &&
         (!q.outcome || o.key.outcome == *q.outcome);
}

// The points of the market an answer is at, decoded once for all its
// outcomes (the outcomes are sorted by market).
struct MarketPoints {
  explicit MarketPoints(const history::EventHistory& e) : h(e) {}
  const history::EventHistory& h;
  uint32_t market = 0;
  bool loaded = false;
  std::vector<std::vector<Point>> points;
  std::vector<history::OutcomeState> last;
  void load(uint32_t m) {
    if (loaded && market == m) return;
    h.points_by_number(m, points, last);
    market = m;
    loaded = true;
  }
};

// The outcome's points cut to from/to; `last` gets its state after the newest.
std::vector<Point> points_in_range(const Query& q, MarketPoints& mp, const OutcomeHistory& o,
                                   history::OutcomeState* last = nullptr) {
  mp.load(o.key.market);
  std::vector<Point> pts;
  if (o.number >= mp.points.size()) return pts;
  for (const Point& p : mp.points[o.number])
    if ((!q.from || p.ts >= *q.from) && (!q.to || p.ts <= *q.to)) pts.push_back(p);
  if (last) *last = mp.last[o.number];
  return pts;
}

// [price,flags,ts,seq], or null before any priced point.
void write_quote(json::Writer& w, const Point& p) {
  if (!p.priced) return (void)w.Null();
  w.StartArray();
  w.Int(p.price);
  w.Uint(p.flags);
  w.Int64(p.ts);
  w.Uint64(p.seq);
  w.EndArray();
}

void write_outcome(json::Writer& w, const Query& q, MarketPoints& mp, const OutcomeHistory& o, bool live) {
  history::OutcomeState last;
  const std::vector<Point> pts = points_in_range(q, mp, o, &last);
  w.StartObject();
  w.Key("open");
  write_quote(w, o.open);
  w.Key("close");
  write_quote(w, live ? o.close : last.last_priced());
  w.Key("final");
  w.Bool(live);
  if (q.interval_ms == 0) {
    w.Key("points");
    w.StartArray();
    for (const Point& p : pts) {
      w.StartArray();
      w.Int64(p.ts);
      if (p.priced) {
        w.Int(p.price);
        w.Uint(p.flags);
        w.Uint(p.s);
      } else {
        w.Null();
        w.Null();
        w.Null();
      }
      w.Uint64(p.seq);
      w.EndArray();
    }
    w.EndArray();
  } else {
    std::vector<Candle> candles;
    history::add_candles(pts, q.interval_ms, candles);
    w.Key("candles");
    w.StartArray();
    for (const Candle& k : candles) {
      w.StartArray();
      w.Int64(k.t0);
      w.Int(k.open);
      w.Int(k.high);
      w.Int(k.low);
      w.Int(k.close);
      w.Uint(k.n);
      w.EndArray();
    }
    w.EndArray();
  }
  w.EndObject();
}

void write_json(Call& c, const Query& q, const std::string& id, const history::EventHistory* h,
                const history::HeldState& st) {
  json::Writer& w = c.w;
  c.begin_success();
  w.Key("id");
  json::str(w, id);
  w.Key("epoch");
  json::str(w, st.epoch);
  w.Key("seq");
  w.Uint64(st.seq);
  w.Key("from");
  w.Int64(q.from.value_or(st.held_from));
  w.Key("to");
  w.Int64(q.to.value_or(st.clock));
  w.Key("interval");
  json::str(w, q.interval);
  w.Key("held_from_seq"), w.Uint64(st.held_from_seq);
  if (st.held_from) {
    w.Key("held_from");
    w.Int64(st.held_from);
  }
  w.Key("data");
  w.StartObject();
  if (h) {
    // Sorted by market, line, outcome: one object a market, one a line.
    const auto& outs = h->outcomes();
    MarketPoints mp{*h};
    for (size_t i = 0; i < outs.size();) {
      if (!wanted(q, outs[i])) {
        ++i;
        continue;
      }
      const uint32_t m = outs[i].key.market;
      w.Key(std::to_string(m).c_str());
      w.StartObject();
      for (; i < outs.size() && outs[i].key.market == m;) {
        if (!wanted(q, outs[i])) {
          ++i;
          continue;
        }
        const auto line = outs[i].key.line;
        json::key(w, line.view());
        w.StartObject();
        for (; i < outs.size() && outs[i].key.market == m && outs[i].key.line == line; ++i) {
          if (!wanted(q, outs[i])) continue;
          w.Key(std::to_string(outs[i].key.outcome).c_str());
          write_outcome(w, q, mp, outs[i], h->live_seq() != 0);
        }
        w.EndObject();
      }
      w.EndObject();
    }
  }
  w.EndObject();
  w.EndObject();
  c.send(200);
}

// One row a point (raw) or a candle; nulls are empty cells.
void write_csv(Call& c, const Query& q, const history::EventHistory* h) {
  std::string out = q.interval_ms == 0 ? "market,line,outcome,ts,price,flags,s,seq\n"
                                       : "market,line,outcome,t0,open,high,low,close,n\n";
  auto add = [&out](auto v) {
    out += std::to_string(v);
    out += ',';
  };
  std::optional<MarketPoints> mp;
  if (h) mp.emplace(*h);
  if (h)
    for (const OutcomeHistory& o : h->outcomes()) {
      if (!wanted(q, o)) continue;
      std::string prefix = std::to_string(o.key.market) + "," + std::string(o.key.line.view()) + "," +
                           std::to_string(o.key.outcome) + ",";
      const std::vector<Point> pts = points_in_range(q, *mp, o);
      if (q.interval_ms == 0) {
        for (const Point& p : pts) {
          out += prefix;
          add(p.ts);
          if (p.priced) {
            add(p.price);
            add(p.flags);
            add(static_cast<unsigned>(p.s));
          } else {
            out += ",,,";
          }
          out += std::to_string(p.seq);
          out += '\n';
        }
        continue;
      }
      std::vector<Candle> candles;
      history::add_candles(pts, q.interval_ms, candles);
      for (const Candle& k : candles) {
        out += prefix;
        add(k.t0);
        add(k.open);
        add(k.high);
        add(k.low);
        add(k.close);
        out += std::to_string(k.n);
        out += '\n';
      }
    }
  c.send_raw(200, "text/csv; charset=utf-8", out);
}

}  // namespace

void odds_history(Call& c) {
  auto id = c.param("id");
  if (!id || id->empty()) return c.error(400, err::kMissingId);
  Query q;
  if (!read_query(c, q)) return;
  const ParsedId pid = parse_event_id(*id);
  if (!pid.ok()) return c.error(404, err::kEventNotFound);
  const EventEntry* e = c.snap->events.find(pid.number);
  c.api.inputs.history->read(pid.number, [&](const history::EventHistory* h, const history::HeldState& st) {
    if (!h && !e) return c.error(404, err::kEventNotFound);
    // A range wholly before what is held cannot be answered, not even as empty.
    if (st.held_from && q.to && *q.to < st.held_from) return refuse_horizon(c, st.held_from);
    if (q.csv) return write_csv(c, q, h);
    write_json(c, q, e ? e->key : h->key(), h, st);
  });
}

}  // namespace oddsrelay::rest::routes
