#include "engine/sources/sim_pricing.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace oddsrelay::sim {
namespace {

constexpr double kMargin = 0.05;

double phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

std::vector<double> poisson(double lambda, int32_t n) {
  std::vector<double> p(static_cast<size_t>(n), 0.0);
  double v = std::exp(-lambda);
  for (int32_t k = 0; k < n; ++k) {
    p[static_cast<size_t>(k)] = v;
    v *= lambda / (k + 1);
  }
  return p;
}

int32_t price_of(double p, double margin) {
  if (p <= 0) return 100000;
  double price = 100.0 / (p * (1 + margin));
  return static_cast<int32_t>(std::clamp(std::lround(price), 101L, 100000L));
}

std::string fmt_line(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "s%g", v);
  return buf;
}

void add_line(feed::MarketRec& r, std::string key, bool suspended,
              std::initializer_list<std::pair<uint32_t, int32_t>> outs, uint32_t flags = 0) {
  feed::LineIn line;
  line.key = std::move(key);
  line.suspended = suspended ? 1 : 0;
  line.first = static_cast<uint32_t>(r.outcomes.size());
  for (auto [id, price] : outs) r.outcomes.push_back({id, price, flags});
  line.count = static_cast<uint32_t>(r.outcomes.size()) - line.first;
  r.lines.push_back(std::move(line));
}

// Two-way prices from win/push/lose, the push refunded (so ignored).
void add_two_way(feed::MarketRec& r, std::string key, bool suspended, uint32_t a, uint32_t b, WinPushLose w) {
  double t = w.win + w.lose;
  double pa = t > 0 ? w.win / t : 0.5;
  add_line(r, std::move(key), suspended, {{a, price_of(pa, kMargin)}, {b, price_of(1 - pa, kMargin)}});
}

double round_half(double x) { return std::floor(x) + 0.5; }
double round_quarter(double x) { return std::round(x * 4) / 4; }

}  // namespace

Pricer::Pricer(const MatchState& m) : m_(m) {
  const SportDef& s = *m.sport;
  const double rem = std::max(0.0, m.remaining);
  switch (s.model) {
    case ScoreModel::Goals: {
      double lh = m.strength_home * rem, la = m.strength_away * rem;
      int32_t extra = static_cast<int32_t>(std::ceil(std::max(lh, la) + 6 * std::sqrt(std::max(lh, la)) + 3));
      extra = std::min(extra, 80);
      auto ph = poisson(lh, extra), pa = poisson(la, extra);
      dim_ = std::max(m.home, m.away) + extra;
      dist_.assign(static_cast<size_t>(dim_ * dim_), 0.0);
      for (int32_t i = 0; i < extra; ++i)
        for (int32_t j = 0; j < extra; ++j)
          dist_[static_cast<size_t>((m.home + i) * dim_ + m.away + j)] =
              ph[static_cast<size_t>(i)] * pa[static_cast<size_t>(j)];
      break;
    }
    case ScoreModel::Sets: {
      // strength_home is the chance that home takes any one set.
      int32_t n = s.periods;
      dim_ = n + 1;
      dist_.assign(static_cast<size_t>(dim_ * dim_), 0.0);
      std::vector<double> at(static_cast<size_t>(dim_ * dim_), 0.0);
      at[static_cast<size_t>(std::min(m.home, n) * dim_ + std::min(m.away, n))] = 1;
      double q = m.strength_home;
      for (int32_t t = 0; t < 2 * n; ++t)
        for (int32_t h = 0; h < n; ++h)
          for (int32_t a = 0; a < n; ++a) {
            double v = at[static_cast<size_t>(h * dim_ + a)];
            if (v == 0 || h + a != t) continue;
            at[static_cast<size_t>(h * dim_ + a)] = 0;
            at[static_cast<size_t>((h + 1) * dim_ + a)] += v * q;
            at[static_cast<size_t>(h * dim_ + a + 1)] += v * (1 - q);
          }
      dist_ = std::move(at);
      break;
    }
    case ScoreModel::Matchup:
      dim_ = 2;
      dist_ = {0, 1 - m.strength_home, m.strength_home, 0};  // (0,1) away wins, (1,0) home wins
      if (m.home + m.away > 0) dist_ = {0, m.away > 0 ? 1.0 : 0.0, m.home > 0 ? 1.0 : 0.0, 0};
      break;
    case ScoreModel::Points:
      break;
  }
  if (matrix_model()) {
    for (int32_t h = 0; h < dim_; ++h)
      for (int32_t a = 0; a < dim_; ++a) {
        double v = dist_[static_cast<size_t>(h * dim_ + a)];
        if (h > a)
          p_home_ += v;
        else if (h == a)
          p_draw_ += v;
      }
  } else {
    WinPushLose w = home_hcp(0);
    p_home_ = w.win + w.push / 2;
    p_draw_ = 0;
  }
  if (!s.draw && p_draw_ > 0) {  // ties go to extra time / tie-break: split them
    p_home_ += p_draw_ / 2;
    p_draw_ = 0;
  }
}

void Pricer::margins() const {
  if (!diff_.empty()) return;
  diff_.assign(static_cast<size_t>(2 * dim_ - 1), 0.0);
  total_.assign(static_cast<size_t>(2 * dim_ - 1), 0.0);
  for (int32_t h = 0; h < dim_; ++h)
    for (int32_t a = 0; a < dim_; ++a) {
      const double v = dist_[static_cast<size_t>(h * dim_ + a)];
      diff_[static_cast<size_t>(h - a + dim_ - 1)] += v;
      total_[static_cast<size_t>(h + a)] += v;
    }
}

// The expectation of f(home, away) over the final-score distribution.
template <class F>
double Pricer::expect(F f) const {
  double e = 0;
  for (int32_t h = 0; h < dim_; ++h)
    for (int32_t a = 0; a < dim_; ++a) e += f(h, a) * dist_[static_cast<size_t>(h * dim_ + a)];
  return e;
}

double Pricer::expected_total() const {
  if (!matrix_model()) return m_.home + m_.away + (m_.strength_home + m_.strength_away) * std::max(0.0, m_.remaining);
  return expect([](int32_t h, int32_t a) { return h + a; });
}

double Pricer::expected_diff() const {
  if (!matrix_model()) return m_.home - m_.away + (m_.strength_home - m_.strength_away) * std::max(0.0, m_.remaining);
  return expect([](int32_t h, int32_t a) { return h - a; });
}

double Pricer::p_btts() const {
  if (!matrix_model()) return 1;
  return expect([](int32_t h, int32_t a) { return h > 0 && a > 0 ? 1.0 : 0.0; });
}

double Pricer::p_exact(int32_t h, int32_t a) const {
  if (!matrix_model() || h >= dim_ || a >= dim_) return 0;
  return dist_[static_cast<size_t>(h * dim_ + a)];
}

WinPushLose Pricer::over(double line) const {
  WinPushLose w;
  if (!matrix_model()) {
    double sd = std::max(1.0, m_.sport->sd_diff * 1.2 * std::sqrt(std::max(0.05, m_.remaining)));
    double z = (line - expected_total()) / sd;
    w.win = 1 - phi(z);
    w.lose = phi(z);
    return w;
  }
  margins();
  for (int32_t t = 0; t < 2 * dim_ - 1; ++t) {
    const double v = total_[static_cast<size_t>(t)];
    (t > line ? w.win : t < line ? w.lose : w.push) += v;
  }
  return w;
}

WinPushLose Pricer::home_hcp(double line) const {
  WinPushLose w;
  if (!matrix_model()) {
    double sd = std::max(1.0, m_.sport->sd_diff * std::sqrt(std::max(0.05, m_.remaining)));
    double z = (-line - expected_diff()) / sd;
    w.win = 1 - phi(z);
    w.lose = phi(z);
    return w;
  }
  margins();
  for (int32_t i = 0; i < 2 * dim_ - 1; ++i) {
    const double d = i - (dim_ - 1) + line;  // home - away + line
    (d > 0 ? w.win : d < 0 ? w.lose : w.push) += diff_[static_cast<size_t>(i)];
  }
  return w;
}

std::vector<uint32_t> markets_for(const SportDef& s, bool live, bool first_half) {
  switch (s.model) {
    case ScoreModel::Goals: {
      std::vector<uint32_t> v = {kMatchWinner, live ? kGoalsOverUnderLive : kGoalsOverUnder,
                                 live ? kAsianHandicapLive : kAsianHandicap};
      if (s.draw) v.push_back(kDrawNoBet);
      if (s.id == 1 || s.id == 4 || s.id == 29) v.push_back(kBothTeamsToScore);
      if (s.id == 1) {
        v.push_back(live ? kCorrectScoreLive : kCorrectScore);
        v.push_back(kTotalCorners);
        if (first_half) v.push_back(kFirstHalfHandicap);
      }
      std::sort(v.begin(), v.end());
      return v;
    }
    case ScoreModel::Points:
    case ScoreModel::Sets:
      return {kMatchWinner, live ? kAsianHandicapLive : kAsianHandicap, kTotalOverUnder};
    case ScoreModel::Matchup:
      return {kMatchWinner};
  }
  return {};
}

feed::MarketRec price_market(uint32_t market, const MatchState& m, const Pricer& p, bool suspended) {
  feed::MarketRec r;
  r.market = market;
  const SportDef& s = *m.sport;
  // The market's own outcome ids: first (home / over / yes / a scoreline),
  // second (away / under / no / other), and 1X2's three.
  const uint32_t o1 = first_outcome(market), o2 = o1 + 1;
  switch (market) {
    case kMatchWinner:
      if (s.draw)
        add_line(r, "s", suspended,
                 {{o1, price_of(p.p_home(), kMargin)},
                  {o2, price_of(p.p_draw(), kMargin)},
                  {o1 + 2, price_of(p.p_away(), kMargin)}});
      else
        add_line(r, "s", suspended, {{o1, price_of(p.p_home(), kMargin)}, {o1 + 2, price_of(p.p_away(), kMargin)}});
      break;
    case kDrawNoBet:
      add_two_way(r, "s", suspended, o1, o2, p.home_hcp(0));
      break;
    case kBothTeamsToScore: {
      double y = p.p_btts();
      bool decided = m.home > 0 && m.away > 0;
      add_line(r, "s", suspended,
               {{o1, decided ? 101 : price_of(y, kMargin)}, {o2, decided ? 5000 : price_of(1 - y, kMargin)}},
               decided ? 1 : 0);
      break;
    }
    case kGoalsOverUnder:
    case kGoalsOverUnderLive:
    case kTotalOverUnder: {
      double c = round_half(p.expected_total());
      double step = s.model == ScoreModel::Points ? std::max(1.0, std::round(s.sd_diff / 6)) : 1.0;
      std::vector<double> lines;
      if (s.model == ScoreModel::Sets) {  // totals of sets: N..2N-1 are possible
        for (int32_t n = s.periods; n < 2 * s.periods - 1; ++n) lines.push_back(n + 0.5);
      } else {
        for (int k = -2; k <= 2; ++k) lines.push_back(c + k * step);
      }
      if (s.model == ScoreModel::Goals) {
        lines.push_back(c - 0.25);
        lines.push_back(c + 0.25);
      }
      std::sort(lines.begin(), lines.end());
      for (double l : lines)
        if (l > m.home + m.away) add_two_way(r, fmt_line(l), suspended, o1, o2, p.over(l));
      break;
    }
    case kAsianHandicap:
    case kAsianHandicapLive: {
      double d = p.expected_diff();
      if (s.model == ScoreModel::Goals) {
        double c = round_quarter(-d);
        for (int k = -4; k <= 4; ++k) {
          double l = c + k * 0.25;
          double frac = std::fabs(l - std::trunc(l));
          WinPushLose w;
          if (frac == 0.25 || frac == 0.75) {  // quarter line: half on each neighbour
            auto a = p.home_hcp(l - 0.25), b = p.home_hcp(l + 0.25);
            w = {(a.win + b.win) / 2, (a.push + b.push) / 2, (a.lose + b.lose) / 2};
          } else {
            w = p.home_hcp(l);
          }
          add_two_way(r, fmt_line(l == 0 ? 0 : l), suspended, o1, o2, w);
        }
      } else {
        double step = s.model == ScoreModel::Points ? std::max(1.0, std::round(s.sd_diff / 6)) : 1.0;
        double c = s.model == ScoreModel::Points ? round_half(-d) : 1.5;
        for (int k = s.model == ScoreModel::Points ? -2 : -1; k <= (s.model == ScoreModel::Points ? 2 : 0); ++k) {
          double l = s.model == ScoreModel::Points ? c + k * step : (k == -1 ? -1.5 : 1.5);
          add_two_way(r, fmt_line(l), suspended, o1, o2, p.home_hcp(l));
        }
      }
      break;
    }
    case kCorrectScore:
    case kCorrectScoreLive: {
      double covered = 0;
      for (int32_t h = m.home; h <= m.home + 3; ++h)
        for (int32_t a = m.away; a <= m.away + 3; ++a) {
          double v = p.p_exact(h, a);
          covered += v;
          char key[32];
          std::snprintf(key, sizeof key, "s%d:%d", h, a);
          add_line(r, key, suspended, {{o1, price_of(v, 0.15)}});
        }
      add_line(r, "s", suspended, {{o2, price_of(std::max(0.0, 1 - covered), 0.15)}});
      break;
    }
    case kFirstHalfHandicap: {
      MatchState h1 = m;
      h1.home = m.ht_home;
      h1.away = m.ht_away;
      h1.remaining = m.remaining_1h;
      Pricer p1(h1);
      double c = std::round(-p1.expected_diff()) + 0.5;
      for (double l : {c - 1, c, c + 1}) add_two_way(r, fmt_line(l), suspended, o1, o2, p1.home_hcp(l));
      break;
    }
    case kTotalCorners: {
      double rem = std::max(0.0, m.remaining);
      double lam = 10.2 * rem;
      int32_t have = m.corners_home + m.corners_away;
      int32_t n = static_cast<int32_t>(lam + 6 * std::sqrt(lam) + 4);
      auto pc = poisson(lam, n);
      double c = std::floor(have + lam) + 0.5;
      for (double l : {c - 1, c, c + 1}) {
        if (l < have) continue;
        WinPushLose w;
        for (int32_t k = 0; k < n; ++k) (have + k > l ? w.win : w.lose) += pc[static_cast<size_t>(k)];
        add_two_way(r, fmt_line(l), suspended, o1, o2, w);
      }
      break;
    }
    default:
      break;
  }
  return r;
}

}  // namespace oddsrelay::sim
