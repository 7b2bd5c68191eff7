// What the simulator draws its fixtures and markets from: the spec's sport
// table with a scoring model per sport, participant and tournament names,
// and the market and outcome ids it prices. The market catalog issue makes
// the full dictionary; these ids are the common ones of docs/api.md "Odds".
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace oddsrelay::sim {

// Market ids (docs/api.md "Odds").
enum MarketId : uint32_t {
  kMatchWinner = 1001,        // 1X2 (2-way where the sport has no draw)
  kCorrectScore = 1004,       // pre-match, lines s<h>:<a>
  kAsianHandicap = 1005,      // pre-match ladder
  kGoalsOverUnder = 1007,     // pre-match ladder
  kDrawNoBet = 1009,
  kAsianHandicapLive = 1011,
  kCorrectScoreLive = 1012,
  kGoalsOverUnderLive = 1018,
  kBothTeamsToScore = 1019,
  kFirstHalfHandicap = 1054,
  kTotalOverUnder = 1080,     // points / sets sports
  kTotalCorners = 1128,
};

// Outcome ids.
enum OutcomeId : uint32_t {
  kHome = 2001, kDraw = 2002, kAway = 2003,
  kYes = 2010, kNo = 2011,
  kHcpHome = 2021, kHcpAway = 2022,
  kOver = 2101, kUnder = 2102,
  kScore = 2201, kOtherScore = 2202,
};

enum class ScoreModel : uint8_t {
  Goals,    // Poisson scoring per minute (soccer, hockey, handball, ...)
  Points,   // high scoring; priced with a normal approximation
  Sets,     // race to N sets
  Matchup,  // one winner at the end (combat, motor sport, golf head-to-heads)
};

struct SportDef {
  int32_t id;            // name: sport_name(id), protocol/sports.h
  double weight;        // share of simulated events
  ScoreModel model;
  double mean_per_team; // goals/points per team per match (Goals/Points)
  double sd_diff;       // sd of the final margin (Points)
  int32_t length;       // regulation minutes (sets: minutes per set)
  int32_t periods;      // halves/quarters/...; sets: sets to win
  bool draw;            // 3-way match winner
  bool players;         // participants are people, not teams
};

std::span<const SportDef> sports();
const SportDef* find_sport(int32_t id);

struct Country {
  int64_t id;
  const char* name;
  const char* iso2;
};
struct Tournament {
  int64_t id;
  std::string name;
  int64_t priority;
  const Country* country;
};

// Deterministic fixtures data for one sport.
const std::vector<Tournament>& tournaments(int32_t sport);
// Participant `i` (any i; names repeat with a suffix past the pool).
std::string participant(const SportDef& s, uint64_t i);

}  // namespace oddsrelay::sim
