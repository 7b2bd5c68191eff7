#include "engine/settlement/settlement.h"

#include <charconv>
#include <cmath>
#include <string_view>

namespace oddsrelay {

const char* settle_result_name(SettleResult r) {
  switch (r) {
    case SettleResult::Win:
      return "win";
    case SettleResult::Lose:
      return "lose";
    case SettleResult::Void:
      return "void";
    case SettleResult::Pending:
      return "pending";
  }
  return "pending";
}

namespace {

using R = SettleResult;

struct Verdict {
  SettleResult result;
  const char* reason = nullptr;
};
Verdict win_if(bool w) { return {w ? R::Win : R::Lose}; }
Verdict pending(const char* why) { return {R::Pending, why}; }
Verdict void_(const char* why) { return {R::Void, why}; }

// Kinds V1 settles from the full-time score (docs/settlement.md).
bool v1_kind(std::string_view k) {
  for (std::string_view v :
       {"1x2", "winner", "double_chance", "dnb", "total", "asian_total", "handicap_asian", "handicap",
        "handicap_european", "correct_score", "btts", "odd_even", "exact_goals", "goal_bands", "team_total",
        "team_exact", "team_odd_even", "combo_1x2_btts", "combo_1x2_total"})
    if (k == v) return true;
  return false;
}

// Why a market is not settled from the final score in V1, or null if it is.
const char* coverage_gap(const CatalogMarket& m) {
  if (m.kind == "htft" || m.kind == "highest_half" || m.kind == "team_highest_half") return reason::kHalfTime;
  if (m.period != "ft") return m.period == "1h" || m.period == "2h" ? reason::kHalfTime : reason::kPeriod;
  if (m.kind == "highest_period") return reason::kPeriod;
  if (m.stat != "goals" && m.stat != "points" && m.stat != "runs" && m.stat != "sets") return reason::kStats;
  if (v1_kind(m.kind)) return nullptr;
  for (std::string_view k :
       {"first_team_to_score", "last_team_to_score", "next_goal", "rest_of_match", "race", "race_goals", "team_race"})
    if (m.kind == k) return reason::kSequence;
  return reason::kNotCovered;
}

std::optional<double> line_value(std::string_view special) {
  if (special.empty()) return std::nullopt;
  if (special.front() == '+') special.remove_prefix(1);
  double v = 0;
  auto [p, ec] = std::from_chars(special.data(), special.data() + special.size(), v);
  if (ec != std::errc() || p != special.data() + special.size()) return std::nullopt;
  return v;
}

bool quarter(double l) {
  double f = std::fabs(l - std::trunc(l));
  return std::fabs(f - 0.25) < 1e-9 || std::fabs(f - 0.75) < 1e-9;
}

std::optional<std::pair<int32_t, int32_t>> scoreline(std::string_view special) {
  size_t c = special.find(':');
  if (c == std::string_view::npos) return std::nullopt;
  int32_t h = 0, a = 0;
  auto r1 = std::from_chars(special.data(), special.data() + c, h);
  auto r2 = std::from_chars(special.data() + c + 1, special.data() + special.size(), a);
  if (r1.ec != std::errc() || r2.ec != std::errc() || r2.ptr != special.data() + special.size()) return std::nullopt;
  return std::make_pair(h, a);
}

// "3", "6+", "2-3": does `t` match? nullopt if the part is not a count.
struct Count {
  int32_t lo, hi;  // hi < 0: open ended
};
std::optional<Count> parse_count(std::string_view s) {
  int32_t lo = 0, hi = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), lo);
  if (ec != std::errc()) return std::nullopt;
  std::string_view rest(p, static_cast<size_t>(s.data() + s.size() - p));
  if (rest.empty()) return Count{lo, lo};
  if (rest == "+") return Count{lo, -1};
  if (rest.front() == '-') {
    auto [q, ec2] = std::from_chars(rest.data() + 1, rest.data() + rest.size(), hi);
    if (ec2 == std::errc() && q == rest.data() + rest.size()) return Count{lo, hi};
  }
  return std::nullopt;
}

// The event-level facts one outcome is judged against.
struct Facts {
  int32_t h = 0, a = 0;
  bool final = true;  // false: in play, only decided outcomes settle
};

// 1X2 part: does "Home"/"Draw"/"Away" hold for the score?
std::optional<bool> result_part(std::string_view p, int32_t h, int32_t a) {
  if (p == "Home") return h > a;
  if (p == "Draw") return h == a;
  if (p == "Away") return a > h;
  if (p == "1X") return h >= a;
  if (p == "12") return h != a;
  if (p == "X2") return a >= h;
  return std::nullopt;
}

// Over/Under `l` against total `t`, with whole-line pushes (rule 4).
Verdict over_under(std::string_view side, double l, int32_t t, bool final) {
  const bool over = side == "Over";
  if (side != "Over" && side != "Under") return pending(reason::kNotCovered);
  if (quarter(l)) return void_(reason::kQuarterLine);
  if (!final) {  // in play the total only grows: Over is won, Under lost, once past the line
    if (t > l) return win_if(over);
    return pending(reason::kNotEnded);
  }
  if (t == l) return void_(reason::kPush);
  return win_if(over == (t > l));
}

// The lines of one market that settlement reads: those at the last read
// before full time (or now) and those withdrawn earlier (line_history.h).
struct MarketLines {
  const Market* current = nullptr;
  const Market* withdrawn = nullptr;
  template <class F>
  void for_each(F&& f) const {
    if (current)
      for (const Line& l : current->lines) f(*current, l, false);
    if (withdrawn)
      for (const Line& l : withdrawn->lines)
        if (!current || !has(*current, l.key)) f(*withdrawn, l, true);
  }
  static bool has(const Market& m, LineKey k) {
    for (const Line& l : m.lines)
      if (l.key == k) return true;
    return false;
  }
};

Verdict judge(const CatalogMarket& m, const MarketLines& market, const Line& line, uint32_t outcome,
              const std::vector<std::string>& parts, const Facts& f) {
  const std::string_view kind = m.kind, p0 = parts.empty() ? std::string_view() : std::string_view(parts[0]);
  const int32_t h = f.h, a = f.a, total = h + a;
  const int32_t team_total = m.team == "home" ? h : m.team == "away" ? a : total;
  const auto l = line_value(line.key.special());

  if (kind == "total" || kind == "asian_total" || kind == "team_total") {
    if (!l) return pending(reason::kNoLine);
    return over_under(p0, *l, team_total, f.final);
  }
  if (kind == "btts") {
    const bool both = h > 0 && a > 0;
    if (!f.final) return both ? win_if(p0 == "Yes") : pending(reason::kNotEnded);
    return win_if((p0 == "Yes") == both);
  }
  if (kind == "correct_score") {
    if (outcome == 2202 || p0 == "Other") {  // no listed scoreline matches (in play: none can any more)
      // Listed: every scoreline the market priced, withdrawn ones included.
      bool listed_reachable = false, listed_hit = false;
      market.for_each([&](const Market&, const Line& other, bool) {
        if (auto sl = scoreline(other.key.special())) {
          listed_hit |= *sl == std::make_pair(h, a);
          listed_reachable |= sl->first >= h && sl->second >= a;
        }
      });
      if (!f.final) return listed_reachable ? pending(reason::kNotEnded) : win_if(true);
      return win_if(!listed_hit);
    }
    auto sl = scoreline(line.key.special());
    if (!sl) return pending(reason::kNoLine);
    if (!f.final) return (h > sl->first || a > sl->second) ? win_if(false) : pending(reason::kNotEnded);
    return win_if(*sl == std::make_pair(h, a));
  }
  if (kind == "exact_goals" || kind == "team_exact" || kind == "goal_bands") {
    auto c = parse_count(p0);
    if (!c) return pending(reason::kNotCovered);
    const int32_t t = kind == "team_exact" ? team_total : total;
    const bool open = c->hi < 0;
    if (!f.final) {
      if (open && t >= c->lo) return win_if(true);
      if (!open && t > c->hi) return win_if(false);
      return pending(reason::kNotEnded);
    }
    return win_if(t >= c->lo && (open || t <= c->hi));
  }
  // Everything below can still turn until full time.
  if (!f.final) return pending(reason::kNotEnded);
  if (kind == "odd_even" || kind == "team_odd_even") {
    if (p0 != "Odd" && p0 != "Even") return pending(reason::kNotCovered);
    return win_if((p0 == "Odd") == (team_total % 2 != 0));
  }
  if (kind == "1x2" || kind == "double_chance") {
    auto r = result_part(p0, h, a);
    return r ? win_if(*r) : pending(reason::kNotCovered);
  }
  if (kind == "winner" || kind == "dnb") {  // two-way: a draw refunds (rule 7 for DNB)
    if (h == a) return void_(reason::kPush);
    auto r = result_part(p0, h, a);
    return r ? win_if(*r) : pending(reason::kNotCovered);
  }
  if (kind == "handicap_asian" || kind == "handicap") {
    if (!l) return pending(reason::kNoLine);
    if (quarter(*l)) return void_(reason::kQuarterLine);  // rule 6
    const double d = h + *l - a;                          // the line is the home side's handicap
    if (d == 0) return void_(reason::kPush);
    if (p0 == "Home") return win_if(d > 0);
    if (p0 == "Away") return win_if(d < 0);
    return pending(reason::kNotCovered);
  }
  if (kind == "handicap_european") {
    if (!l) return pending(reason::kNoLine);
    const double d = h + *l - a;
    if (p0 == "Draw") return win_if(d == 0);
    if (d == 0) return void_(reason::kPush);  // rule 5: a tie voids home and away
    if (p0 == "Home") return win_if(d > 0);
    if (p0 == "Away") return win_if(d < 0);
    return pending(reason::kNotCovered);
  }
  if (kind == "combo_1x2_btts" || kind == "combo_1x2_total") {
    if (parts.size() < 2) return pending(reason::kNotCovered);
    auto r = result_part(parts[0], h, a);
    if (!r) return pending(reason::kNotCovered);
    if (kind == "combo_1x2_btts") return win_if(*r && ((parts[1] == "Yes") == (h > 0 && a > 0)));
    auto cl = parts.size() > 2 ? line_value(parts[2]) : std::nullopt;
    if (!cl) return pending(reason::kNoLine);
    Verdict ou = over_under(parts[1], *cl, total, true);
    if (ou.result == R::Pending) return ou;
    if (!*r) return win_if(false);  // the result leg lost: a pushed total cannot save it
    return ou;
  }
  return pending(reason::kNotCovered);
}

const char* result_reason(feed::MatchResult r) {
  switch (r) {
    case feed::MatchResult::Abandoned:
      return reason::kAbandoned;
    case feed::MatchResult::Cancelled:
      return reason::kCancelled;
    case feed::MatchResult::Expunged:
      return reason::kExpunged;
    default:
      return nullptr;
  }
}

}  // namespace

Settlement settle(const EventEntry& e, const Catalog& catalog, bool include_inplay) {
  Settlement s;
  const ScoreState* sc = e.score.get();
  const bool ended = sc && sc->ended;
  if (sc) {
    s.status = ended ? feed::ScoreStatus::Ended : sc->last.status;
    s.settled_at = ended ? sc->final_at : sc->ts;
  }
  Facts f;
  if (ended) {
    s.result = sc->final_result;
    s.score = sc->final_score;
    s.final_version = sc->final_version;
  } else if (sc && sc->last.home && sc->last.away) {
    s.score = std::make_pair(*sc->last.home, *sc->last.away);
  }
  s.inplay = !ended && include_inplay && sc && sc->last.status == feed::ScoreStatus::Live && s.score.has_value();
  if (s.score) {
    f.h = s.score->first;
    f.a = s.score->second;
  }
  f.final = ended;
  const char* abandoned = ended ? result_reason(s.result) : nullptr;

  // Every line the event priced: the odds at the first `ended` (else now),
  // and the lines withdrawn before, each settled on its own last read.
  const MarketList& base = ended && !sc->odds_at_end.empty() ? sc->odds_at_end : e.markets;
  MarketList unpacked;
  const MarketList& gone = e.history ? history_markets(*e.history, unpacked) : unpacked;
  for (size_t i = 0, j = 0; i < base.size() || j < gone.size();) {
    MarketLines market;
    uint32_t id;
    if (j == gone.size() || (i < base.size() && base[i].id <= gone[j].id)) {
      id = base[i].id;
      market.current = base[i++].ptr.get();
      if (j < gone.size() && gone[j].id == id) market.withdrawn = gone[j++].ptr.get();
    } else {
      id = gone[j].id;
      market.withdrawn = gone[j++].ptr.get();
    }
    const CatalogMarket* cm = catalog.market(id);
    const char* gap = cm ? coverage_gap(*cm) : reason::kUnknownMarket;
    MarketSettlement ms;
    ms.market = id;
    market.for_each([&](const Market& lines_of, const Line& line, bool withdrawn) {
      LineSettlement ls;
      ls.key = std::string(line.key.view());
      ls.line = std::string(line.key.special());
      ls.withdrawn = withdrawn;
      ls.last_read = line.ls;
      for (uint32_t k = line.first; k < line.first + line.count; ++k) {
        const Outcome& o = lines_of.outcomes[k];
        Verdict v{R::Pending, reason::kNotEnded};
        if (ended) {
          if (abandoned)
            v = gap ? pending(gap) : void_(abandoned);  // rule 8
          else if (!s.score)
            v = void_(reason::kNoScore);  // rule 3
          else if (gap)
            v = pending(gap);
          else if (line.suspended || o.flags)
            v = void_(reason::kSuspended);  // rule 7, on this line's own last read
          else if (const auto* parts = catalog.outcome_parts(o.id))
            v = judge(*cm, market, line, o.id, *parts, f);
          else
            v = pending(reason::kNotCovered);
        } else if (s.inplay && !gap) {
          if (const auto* parts = catalog.outcome_parts(o.id)) v = judge(*cm, market, line, o.id, *parts, f);
        }
        (v.result == R::Pending ? s.pending : v.result == R::Void ? s.voided : s.covered)++;
        ls.outcomes.push_back({o.id, v.result, v.result == R::Win || v.result == R::Lose ? nullptr : v.reason});
      }
      ms.lines.push_back(std::move(ls));
    });
    s.markets.push_back(std::move(ms));
  }
  return s;
}

}  // namespace oddsrelay
