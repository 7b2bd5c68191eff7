// The odds-history answer's body (engine/history/history_answer.h).
#include "engine/history/history_answer.h"

#include <algorithm>
#include <vector>

#include "engine/history/candles.h"

namespace oddsrelay::history {

namespace {

bool wanted(const HistoryQuery& q, const OutcomeHistory& o) {
  return (!q.market || o.key.market == *q.market) && (!q.line || o.key.line.view() == *q.line) &&
         (!q.outcome || o.key.outcome == *q.outcome);
}

// The points of the market an answer is at, decoded once for all its
// outcomes (the outcomes are sorted by market).
struct MarketPoints {
  explicit MarketPoints(const EventHistory& e) : h(e) {}
  const EventHistory& h;
  uint32_t market = 0;
  bool loaded = false;
  std::vector<std::vector<Point>> points;
  std::vector<OutcomeState> last;
  void load(uint32_t m) {
    if (loaded && market == m) return;
    h.points_by_number(m, points, last);
    market = m;
    loaded = true;
  }
};

// The outcome's points cut to from/to; `last` gets its state after the newest.
std::vector<Point> points_in_range(const HistoryQuery& q, MarketPoints& mp, const OutcomeHistory& o,
                                   OutcomeState* last = nullptr) {
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

// [ts,price,flags,s,seq], the first three null at a null point.
void write_point(json::Writer& w, const Point& p) {
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

// [t0,open,high,low,close,n]
void write_candle(json::Writer& w, const Candle& k) {
  w.StartArray();
  w.Int64(k.t0);
  w.Int(k.open);
  w.Int(k.high);
  w.Int(k.low);
  w.Int(k.close);
  w.Uint(k.n);
  w.EndArray();
}

void write_outcome(json::Writer& w, const HistoryQuery& q, MarketPoints& mp, const OutcomeHistory& o, bool live) {
  OutcomeState last;
  const std::vector<Point> pts = points_in_range(q, mp, o, &last);
  static const std::vector<Point> kNone;
  const std::vector<Point>& all = o.number < mp.points.size() ? mp.points[o.number] : kNone;
  w.StartObject();
  w.Key("open");
  write_quote(w, mp.h.open_of(o, all));
  w.Key("close");
  write_quote(w, live ? mp.h.close_of(o, all) : last.last_priced());
  w.Key("final");
  w.Bool(live);
  if (q.interval_ms == 0) {
    w.Key("points");
    w.StartArray();
    for (const Point& p : pts) write_point(w, p);
    w.EndArray();
  } else {
    std::vector<Candle> candles;
    add_candles(pts, q.interval_ms, candles);
    w.Key("candles");
    w.StartArray();
    for (const Candle& k : candles) write_candle(w, k);
    w.EndArray();
  }
  w.EndObject();
}

// {market: {line: {outcome: ...}}} for the outcomes the query wants; the
// outcomes are sorted by market, line, outcome, so each object is written
// in one run.
void write_data(json::Writer& w, const HistoryQuery& q, const EventHistory& h) {
  const auto& outs = h.outcomes();
  MarketPoints mp{h};
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
        write_outcome(w, q, mp, outs[i], h.live_seq() != 0);
      }
      w.EndObject();
    }
    w.EndObject();
  }
}

void add_cell(std::string& out, auto v, char end = ',') {
  out += std::to_string(v);
  out += end;
}

// The rows of one outcome; nulls are empty cells.
void add_rows(std::string& out, const HistoryQuery& q, const std::string& prefix, const std::vector<Point>& pts) {
  if (q.interval_ms == 0) {
    for (const Point& p : pts) {
      out += prefix;
      add_cell(out, p.ts);
      if (p.priced) {
        add_cell(out, p.price);
        add_cell(out, p.flags);
        add_cell(out, static_cast<unsigned>(p.s));
      } else {
        out += ",,,";
      }
      add_cell(out, p.seq, '\n');
    }
    return;
  }
  std::vector<Candle> candles;
  add_candles(pts, q.interval_ms, candles);
  for (const Candle& k : candles) {
    out += prefix;
    add_cell(out, k.t0);
    add_cell(out, k.open);
    add_cell(out, k.high);
    add_cell(out, k.low);
    add_cell(out, k.close);
    add_cell(out, k.n, '\n');
  }
}

}  // namespace

void write_history_json(json::Writer& w, const HistoryQuery& q, std::string_view id, const EventHistory* h,
                        const HeldState& st) {
  w.Key("id");
  json::str(w, id);
  w.Key("epoch");
  json::str(w, st.epoch);
  w.Key("seq");
  w.Uint64(st.seq);
  w.Key("from");
  w.Int64(q.from.value_or(st.held_from));
  w.Key("to");
  // Absent, the newest `at` held; never before `from` (a range that starts
  // past it is empty, not reversed).
  w.Int64(q.to.value_or(std::max(st.clock, q.from.value_or(st.held_from))));
  w.Key("interval");
  json::str(w, q.interval);
  w.Key("held_from_seq"), w.Uint64(st.held_from_seq);
  if (st.held_from) {
    w.Key("held_from");
    w.Int64(st.held_from);
  }
  w.Key("data");
  w.StartObject();
  if (h) write_data(w, q, *h);
  w.EndObject();
}

std::string history_csv(const HistoryQuery& q, const EventHistory* h) {
  std::string out = q.interval_ms == 0 ? "market,line,outcome,ts,price,flags,s,seq\n"
                                       : "market,line,outcome,t0,open,high,low,close,n\n";
  if (!h) return out;
  MarketPoints mp{*h};
  for (const OutcomeHistory& o : h->outcomes()) {
    if (!wanted(q, o)) continue;
    const std::string prefix =
        std::to_string(o.key.market) + "," + std::string(o.key.line.view()) + "," + std::to_string(o.key.outcome) + ",";
    add_rows(out, q, prefix, points_in_range(q, mp, o));
  }
  return out;
}

}  // namespace oddsrelay::history
