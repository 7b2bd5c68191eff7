// The simulator's price model: a final-score distribution for a match in
// progress (Poisson goals, a race to N sets, a matchup, or a normal
// approximation for points sports) and the market records priced from it
// with a bookmaker margin. Deterministic: no randomness in here.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/sources/sim_catalog.h"
#include "protocol/feed_record.h"

namespace oddsrelay::sim {

struct MatchState {
  const SportDef* sport = nullptr;
  double strength_home = 1, strength_away = 1;  // expected score per team over regulation
  int32_t home = 0, away = 0;
  double remaining = 1;              // share of regulation still to play, 0..1
  double remaining_1h = 0.5;         // share of regulation left in the first half
  int32_t ht_home = 0, ht_away = 0;  // first-half score so far
  int32_t corners_home = 0, corners_away = 0;
};

struct WinPushLose {
  double win = 0, push = 0, lose = 0;
};

class Pricer {
 public:
  explicit Pricer(const MatchState& m);

  double p_home() const { return p_home_; }
  double p_draw() const { return p_draw_; }
  double p_away() const { return 1 - p_home_ - p_draw_; }
  double p_btts() const;
  double p_exact(int32_t h, int32_t a) const;
  WinPushLose over(double line) const;      // total > line
  WinPushLose home_hcp(double line) const;  // home + line beats away
  double expected_total() const;
  double expected_diff() const;  // home - away

 private:
  bool matrix_model() const { return !dist_.empty(); }
  template <class F>
  double expect(F f) const;
  const MatchState& m_;
  // Final score distribution: dist_[h * dim_ + a] for h, a in [0, dim_).
  std::vector<double> dist_;
  // Its margins: diff_[h - a + dim_ - 1] and total_[h + a], made on the
  // first line asked. A market asks up to 18 handicap or total lines of
  // one distribution, so a line costs a pass over 2 * dim_ sums, not dim_^2
  // cells (the simulator spent 40% of its time in those passes).
  void margins() const;
  mutable std::vector<double> diff_, total_;
  int32_t dim_ = 0;
  double p_home_ = 0, p_draw_ = 0;
};

// Every market the simulator offers for this sport and phase.
std::vector<uint32_t> markets_for(const SportDef& s, bool live, bool first_half);

// Prices one market. `suspended` marks every line s=1 (goal, VAR).
feed::MarketRec price_market(uint32_t market, const MatchState& m, const Pricer& p, bool suspended);

}  // namespace oddsrelay::sim
