#include "engine/sources/simulator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>

#include "engine/sources/sim_catalog.h"
#include "engine/sources/sim_pricing.h"
#include "protocol/event_json.h"

namespace oddsrelay::sim {
namespace {

constexpr uint64_t kFirstNumber = 10'000'000;

// Fixed-shape ids and labels, formatted without string concatenation.
template <class... A>
std::string fmt(const char* f, A... args) {
  char buf[64];
  int n = std::snprintf(buf, sizeof buf, f, args...);
  return std::string(buf, static_cast<size_t>(n < 0 ? 0 : n));
}
using ull = unsigned long long;
using ll = long long;

// xoshiro256**, seeded by splitmix64: the same stream on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (auto& w : s_) {
      seed += 0x9e3779b97f4a7c15ULL;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      w = z ^ (z >> 31);
    }
  }
  uint64_t next() {
    uint64_t r = rotl(s_[1] * 5, 7) * 9, t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return r;
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }
  bool chance(double p) { return uniform() < p; }
  double normal() {
    double u1 = std::max(uniform(), 1e-300), u2 = uniform();
    return std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  int32_t poisson(double lambda) {
    double l = std::exp(-lambda), p = 1;
    int32_t k = 0;
    do {
      ++k;
      p *= uniform();
    } while (p > l && k < 1000);
    return k - 1;
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

enum class Phase : uint8_t { Prematch, Live, Ended };

struct Match {
  uint64_t number = 0;
  std::string key;
  const SportDef* sport = nullptr;
  const Tournament* tour = nullptr;
  std::string home_name, away_name;
  int64_t channel = 0;
  int map_entries = 1;
  Phase phase = Phase::Prematch;
  int64_t kickoff_vt = 0;
  double sh = 1, sa = 1;  // strengths (see MatchState)
  int32_t home = 0, away = 0, ht_home = 0, ht_away = 0;
  int32_t corners[2] = {0, 0}, yellow[2] = {0, 0}, shots[2] = {0, 0};
  int32_t minute = 0;      // match minutes played
  bool postpone = false;   // will be postponed at kick-off
  bool postponed = false;  // was postponed, not yet kicked off
  int32_t abandon_at = 0;  // minute to abandon at (0: plays out)
  int64_t reopen_vt = 0;   // suspended until then (0: open)
  int64_t remove_vt = 0;   // after full time
  std::vector<uint32_t> markets;
};

// A corrected final waiting for its time (the match may be gone by then).
struct Correction {
  int64_t due_vt = 0;
  uint64_t number = 0;
  std::string key;
  int32_t home = 0, away = 0;
  feed::MatchResult result = feed::MatchResult::Completed;
};

}  // namespace

struct Simulator::Impl {
  SimOptions o;
  Rng rng;
  Rng crng;  // corrections only, so that they leave the main stream alone
  std::vector<Correction> corrections;
  double vt = 0, step;
  int64_t next_tick = 0;
  uint64_t serial = 0;
  std::vector<Match> matches;
  std::vector<size_t> live, pre;  // indices by phase, for picking odds targets
  int64_t at = 0;
  std::vector<feed::Record>* out = nullptr;

  explicit Impl(const SimOptions& opts)
      : o(opts), rng(opts.seed), crng(opts.seed ^ 0xc0cec7ed5c0e5ULL), step(1000.0 / std::max(opts.rate, 0.001)) {}

  int64_t tick_ms() const { return o.tick_ms > 0 ? o.tick_ms : std::min<int64_t>(1000, o.minute_ms); }

  int64_t now() const { return static_cast<int64_t>(vt); }
  int64_t duration_ms(const Match& m) const {
    int32_t len = m.sport->model == ScoreModel::Sets ? m.sport->length * (2 * m.sport->periods - 1) : m.sport->length;
    return len * o.minute_ms;
  }

  feed::Record& emit(const Match& m) {
    out->emplace_back();
    feed::Record& r = out->back();
    r.at = at;
    r.id = m.key;
    r.number = m.number;
    return r;
  }

  const SportDef& pick_sport() {
    double total = 0;
    for (const auto& s : sports()) total += s.weight;
    double x = rng.uniform() * total;
    for (const auto& s : sports())
      if ((x -= s.weight) < 0) return s;
    return sports().front();
  }

  Match make_match() {
    Match m;
    m.number = kFirstNumber + ++serial;
    m.sport = &pick_sport();
    const auto& tours = tournaments(m.sport->id);
    m.tour = &tours[rng.below(tours.size())];
    uint64_t pool = 400;
    uint64_t hi = rng.below(pool), ai = rng.below(pool - 1);
    if (ai >= hi) ++ai;
    m.home_name = participant(*m.sport, hi + static_cast<uint64_t>(m.sport->id) * 7);
    m.away_name = participant(*m.sport, ai + static_cast<uint64_t>(m.sport->id) * 7);
    m.channel = m.sport->id * 100 + m.tour->priority;
    // Soccer ids always carry the channel; other sports do half the time.
    bool with_channel = m.sport->id == 1 || (m.number & 1);
    m.key = with_channel ? fmt("s7-%lld.%llu", ll(m.channel), ull(m.number)) : fmt("s7-%llu", ull(m.number));
    m.map_entries = 1 + static_cast<int>(rng.below(3));
    switch (m.sport->model) {
      case ScoreModel::Goals:
      case ScoreModel::Points: {
        double mean = m.sport->mean_per_team, spread = m.sport->model == ScoreModel::Goals ? 0.3 : 0.06;
        m.sh = mean * std::exp(spread * rng.normal() + 0.05);
        m.sa = mean * std::exp(spread * rng.normal() - 0.05);
        break;
      }
      case ScoreModel::Sets:
      case ScoreModel::Matchup:
        m.sh = std::clamp(0.5 + 0.15 * rng.normal(), 0.1, 0.9);
        m.sa = 1 - m.sh;
        break;
    }
    m.postpone = rng.chance(0.02);
    if (m.sport->model != ScoreModel::Sets && rng.chance(0.015))
      m.abandon_at = 1 + static_cast<int32_t>(rng.below(static_cast<uint64_t>(m.sport->length - 1)));
    return m;
  }

  MatchState state(const Match& m) const {
    MatchState s;
    s.sport = m.sport;
    s.strength_home = m.sh;
    s.strength_away = m.sa;
    s.home = m.home;
    s.away = m.away;
    double len = m.sport->length;
    s.remaining = m.sport->model == ScoreModel::Sets ? 1 : std::max(0.0, 1 - m.minute / len);
    s.remaining_1h = std::max(0.0, 0.5 - m.minute / len);
    s.ht_home = m.minute < len / 2 ? m.home : m.ht_home;
    s.ht_away = m.minute < len / 2 ? m.away : m.ht_away;
    s.corners_home = m.corners[0];
    s.corners_away = m.corners[1];
    return s;
  }

  bool first_half(const Match& m) const { return m.minute * 2 < m.sport->length; }

  void emit_event(const Match& m) {
    auto e = std::make_shared<feed::EventObject>();
    const Country* c = m.tour->country;
    e->c = feed::CountryTuple{c->id, c->name, m.sport->id, c->iso2};
    e->t = feed::TournamentTuple{m.tour->id, m.tour->name, m.tour->priority};
    bool is_live = m.phase == Phase::Live || m.phase == Phase::Ended;
    e->g = m.sport->id * 10 + (is_live ? 1 : 0);
    e->ts = m.kickoff_vt / 1000;
    e->h = m.home_name;
    e->a = m.away_name;
    e->co = c->id * 100 + m.tour->priority;
    if (is_live) {
      e->map.push_back({fmt("s7_l%lld.%llu", ll(m.channel), ull(m.number)), m.reopen_vt ? 1 : 0});
    } else {
      for (int k = 0; k < m.map_entries; ++k)
        e->map.push_back({fmt("s7_p%lld.%llu", ll(m.channel + k * 10000), ull(m.number)), 0});
    }
    e->s = m.home * 1000 + m.away;
    if (is_live) e->ms = m.minute;
    e->live = is_live;
    e->sport = m.sport->id;
    feed::finalize_event_json(*e);
    emit(m).body = std::shared_ptr<const feed::EventObject>(std::move(e));
  }

  std::string period_label(const Match& m) const {
    const SportDef& s = *m.sport;
    if (m.phase == Phase::Ended) return "FT";
    if (s.model == ScoreModel::Sets) return fmt("S%d", m.home + m.away + 1);
    if (s.model == ScoreModel::Matchup) return "R1";
    int32_t per = std::min(s.periods, 1 + m.minute * s.periods / s.length);
    if (s.periods == 2) return per == 1 ? "1H" : "2H";
    return fmt(s.periods == 4 ? "Q%d" : s.periods == 3 ? "P%d" : "I%d", per);
  }

  void emit_score(const Match& m, feed::MatchResult result = feed::MatchResult::None) {
    feed::ScoreRec s;
    s.status = m.phase == Phase::Prematch ? feed::ScoreStatus::Scheduled
               : m.phase == Phase::Live   ? feed::ScoreStatus::Live
                                          : feed::ScoreStatus::Ended;
    s.kickoff = m.kickoff_vt / 1000;
    if (m.phase != Phase::Prematch) {
      s.home = m.home;
      s.away = m.away;
      s.period = period_label(m);
      if (m.sport->model != ScoreModel::Sets) {
        char clock[16];
        std::snprintf(clock, sizeof clock, "%02d:00", m.minute);
        s.clock = clock;
        s.match_length = m.sport->length;
      }
      if (m.sport->periods == 2 && m.minute * 2 >= m.sport->length && m.sport->model != ScoreModel::Sets)
        s.ht = std::make_pair(m.ht_home, m.ht_away);
    }
    s.result = result;
    s.postponed = m.postponed && m.phase == Phase::Prematch;
    emit(m).body = std::move(s);
  }

  void emit_stats(const Match& m, bool final) {
    if (m.sport->id != 1) return;
    feed::StatsRec s;
    s.values[0] = std::make_pair(m.corners[0], m.corners[1]);
    s.values[1] = std::make_pair(m.yellow[0], m.yellow[1]);
    s.values[4] = std::make_pair(m.shots[0], m.shots[1]);
    s.final = final;
    emit(m).body = std::move(s);
  }

  void emit_market(const Match& m, uint32_t id, bool suspended) { emit_markets(m, {&id, 1}, suspended); }

  // One price model for all of a match's markets at once (a goal, the
  // final whistle, a reopen reprice every market of the same state).
  void emit_markets(const Match& m, std::span<const uint32_t> ids, bool suspended) {
    if (ids.empty()) return;
    MatchState st = state(m);
    Pricer p(st);
    for (uint32_t id : ids) emit(m).body = price_market(id, st, p, suspended);
  }

  void emit_removal(const Match& m, uint32_t id) {
    feed::MarketRec r;
    r.market = id;
    emit(m).body = std::move(r);
  }

  // Brings the offered market list in line with the match's phase, emitting
  // removals for what goes and prices for what comes.
  void refresh_markets(Match& m, bool suspended) {
    auto want = markets_for(*m.sport, m.phase == Phase::Live, first_half(m));
    for (uint32_t id : m.markets)
      if (!std::binary_search(want.begin(), want.end(), id)) emit_removal(m, id);
    emit_markets(m, want, suspended);
    m.markets = std::move(want);
  }

  void open_match(Match& m) {
    emit_event(m);
    emit_score(m);
    refresh_markets(m, false);
  }

  void kick_off(Match& m) {
    if (m.postpone) {
      m.kickoff_vt += 2 * duration_ms(m);
      m.postpone = false;
      m.postponed = true;
      emit_event(m);
      emit_score(m);
      return;
    }
    m.postponed = false;
    m.phase = Phase::Live;
    m.minute = 0;
    emit_event(m);
    emit_score(m);
    refresh_markets(m, false);
  }

  void goal(Match& m, int side) {
    (side == 0 ? m.home : m.away) += 1;
    m.reopen_vt = now() + 2000 + static_cast<int64_t>(rng.below(3000));  // clears within seconds
    emit_score(m);
    emit_event(m);
    emit_markets(m, m.markets, true);
  }

  void play_minute(Match& m) {
    const SportDef& s = *m.sport;
    ++m.minute;
    switch (s.model) {
      case ScoreModel::Goals:
        for (int side = 0; side < 2; ++side) {
          double lam = (side == 0 ? m.sh : m.sa) / s.length;
          int32_t g = rng.poisson(lam);
          for (int32_t k = 0; k < g; ++k) goal(m, side);
        }
        if (s.id == 1) {
          bool changed = false;
          for (int side = 0; side < 2; ++side) {
            if (rng.chance(5.1 / 90)) {
              ++m.corners[side];
              changed = true;
            }
            if (rng.chance(2.0 / 90)) {
              ++m.yellow[side];
              changed = true;
            }
            if (rng.chance(12.0 / 90)) {
              ++m.shots[side];
              changed = true;
            }
          }
          if (changed) emit_stats(m, false);
        }
        break;
      case ScoreModel::Points: {
        m.home += rng.poisson(m.sh / s.length);
        m.away += rng.poisson(m.sa / s.length);
        break;
      }
      case ScoreModel::Sets:
        if (rng.chance(1.0 / s.length)) goal(m, rng.chance(m.sh) ? 0 : 1);
        break;
      case ScoreModel::Matchup:
        break;
    }
    if (s.periods == 2 && m.minute * 2 == s.length) {
      m.ht_home = m.home;
      m.ht_away = m.away;
      refresh_markets(m, m.reopen_vt != 0);  // first-half markets go
    }
  }

  bool finished(const Match& m) const {
    const SportDef& s = *m.sport;
    if (s.model == ScoreModel::Sets) return m.home >= s.periods || m.away >= s.periods;
    return m.minute >= s.length;
  }

  void full_time(Match& m, feed::MatchResult result) {
    if (m.sport->model == ScoreModel::Matchup && result == feed::MatchResult::Completed) {
      (rng.chance(m.sh) ? m.home : m.away) = 1;
    }
    m.phase = Phase::Ended;
    m.reopen_vt = 0;
    emit_score(m, result);
    emit_stats(m, true);
    // Trading stops after the final whistle: suspend what is still offered.
    emit_markets(m, m.markets, true);
    m.remove_vt = now() + 10'000;
    if (o.correct_permille > 0 && crng.below(1000) < o.correct_permille) {
      Correction c{now() + 1000 + static_cast<int64_t>(crng.below(static_cast<uint64_t>(4 * duration_ms(m)))),
                   m.number,
                   m.key,
                   m.home,
                   m.away,
                   result};
      (crng.chance(0.5) ? c.home : c.away) += 1;
      corrections.push_back(std::move(c));
    }
  }

  void emit_due_corrections() {
    for (size_t i = 0; i < corrections.size();) {
      const Correction& c = corrections[i];
      if (now() < c.due_vt) {
        ++i;
        continue;
      }
      feed::ScoreRec s;
      s.status = feed::ScoreStatus::Ended;
      s.home = c.home;
      s.away = c.away;
      s.period = "FT";
      s.result = c.result;
      out->emplace_back();
      feed::Record& r = out->back();
      r.at = at;
      r.id = c.key;
      r.number = c.number;
      r.body = std::move(s);
      corrections.erase(corrections.begin() + static_cast<ptrdiff_t>(i));
    }
  }

  void tick() {
    bool moved = false;
    for (size_t i = 0; i < matches.size(); ++i) {
      Match& m = matches[i];
      switch (m.phase) {
        case Phase::Prematch:
          if (now() >= m.kickoff_vt) {
            kick_off(m);
            moved = true;
          }
          break;
        case Phase::Live: {
          int64_t elapsed = (now() - m.kickoff_vt) / o.minute_ms;
          bool played = false;
          while (m.phase == Phase::Live && m.minute < elapsed) {
            play_minute(m);
            played = true;
            if (m.abandon_at && m.minute >= m.abandon_at)
              full_time(m, feed::MatchResult::Abandoned);
            else if (finished(m))
              full_time(m, feed::MatchResult::Completed);
          }
          if (m.phase != Phase::Live) {
            moved = true;
            break;
          }
          if (m.reopen_vt && now() >= m.reopen_vt) {
            m.reopen_vt = 0;
            emit_event(m);
            emit_markets(m, m.markets, false);
          } else if (played) {
            emit_score(m);
            emit_event(m);
          }
          break;
        }
        case Phase::Ended:
          if (now() >= m.remove_vt) {
            emit(m).body = feed::RemoveRec{};
            m = make_match();
            m.kickoff_vt = now() + static_cast<int64_t>((0.2 + 2 * rng.uniform()) * duration_ms(m));
            open_match(m);
            moved = true;
          }
          break;
      }
    }
    if (moved) index();
    if (!corrections.empty()) emit_due_corrections();
  }

  void index() {
    live.clear();
    pre.clear();
    for (size_t i = 0; i < matches.size(); ++i) {
      if (matches[i].phase == Phase::Live)
        live.push_back(i);
      else if (matches[i].phase == Phase::Prematch)
        pre.push_back(i);
    }
  }

  void odds_step() {
    const auto& from = (!live.empty() && (pre.empty() || rng.chance(0.7))) ? live : pre;
    if (from.empty()) return;
    Match& m = matches[from[rng.below(from.size())]];
    // Prices drift: a random walk on the strengths.
    if (m.sport->model == ScoreModel::Sets || m.sport->model == ScoreModel::Matchup) {
      m.sh = std::clamp(m.sh + 0.01 * rng.normal(), 0.05, 0.95);
      m.sa = 1 - m.sh;
    } else {
      m.sh *= std::exp(0.02 * rng.normal());
      m.sa *= std::exp(0.02 * rng.normal());
    }
    if (m.markets.empty()) return;
    emit_market(m, m.markets[rng.below(m.markets.size())], m.reopen_vt != 0);
  }
};

Simulator::Simulator(const SimOptions& opts) : impl_(std::make_unique<Impl>(opts)) {}
Simulator::~Simulator() = default;

int64_t Simulator::now() const { return impl_->now(); }
double Simulator::step_ms() const { return impl_->step; }

void Simulator::open(int64_t start_ms, int64_t at, std::vector<feed::Record>& out) {
  Impl& s = *impl_;
  s.vt = static_cast<double>(start_ms);
  s.next_tick = start_ms + s.tick_ms();
  s.at = at;
  s.out = &out;
  s.matches.reserve(s.o.events);
  for (uint32_t i = 0; i < s.o.events; ++i) {
    Match m = s.make_match();
    if (s.rng.chance(0.35)) {
      // Already in play: kicked off some minutes ago, with a plausible score.
      m.phase = Phase::Live;
      m.postpone = false;
      int32_t len = m.sport->model == ScoreModel::Sets ? m.sport->length * m.sport->periods : m.sport->length;
      m.minute = static_cast<int32_t>(s.rng.below(static_cast<uint64_t>(std::max(1, len * 4 / 5))));
      m.kickoff_vt = start_ms - m.minute * s.o.minute_ms;
      if (m.sport->model == ScoreModel::Goals || m.sport->model == ScoreModel::Points) {
        double f = static_cast<double>(m.minute) / m.sport->length;
        m.home = s.rng.poisson(m.sh * f);
        m.away = s.rng.poisson(m.sa * f);
      }
      if (m.minute * 2 >= m.sport->length) {
        m.ht_home = m.home / 2;
        m.ht_away = m.away / 2;
      }
      if (m.abandon_at && m.abandon_at <= m.minute) m.abandon_at = 0;
    } else {
      m.kickoff_vt = start_ms + static_cast<int64_t>((0.1 + 3 * s.rng.uniform()) * s.duration_ms(m));
    }
    s.open_match(m);
    s.matches.push_back(std::move(m));
  }
  s.index();
}

void Simulator::step(int64_t at, std::vector<feed::Record>& out) {
  Impl& s = *impl_;
  s.at = at;
  s.out = &out;
  s.vt += s.step;
  while (s.now() >= s.next_tick) {
    s.tick();
    s.next_tick += s.tick_ms();
  }
  s.odds_step();
}

}  // namespace oddsrelay::sim
