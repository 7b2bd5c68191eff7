// What the simulator draws its fixtures and markets from: the sport
// table with a scoring model per sport, participant and tournament names,
// and the market and outcome ids it prices: the catalog's (data/catalog.json)
// markets that the interface names, with their own outcome ids.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace oddsrelay::sim {

// Market ids (the ones the interface names; docs/catalog.md).
enum MarketId : uint32_t {
  kMatchWinner = 1001,     // 1X2 (2-way where the sport has no draw)
  kCorrectScore = 1004,    // pre-match, lines s<h>:<a>
  kAsianHandicap = 1005,   // pre-match ladder
  kGoalsOverUnder = 1007,  // pre-match ladder
  kDrawNoBet = 1009,
  kAsianHandicapLive = 1011,
  kCorrectScoreLive = 1012,
  kGoalsOverUnderLive = 1018,
  kBothTeamsToScore = 1019,
  kFirstHalfHandicap = 1054,
  kTotalOverUnder = 1080,  // points / sets sports
  kTotalCorners = 1128,
};

// Outcome ids are per market and consecutive in the catalog
// (data/catalog.json numbers them from 2001 in market id order): a market's
// outcome i is first_outcome(market) + i, in the catalog's order (1X2:
// home, draw, away; two-way markets: home / over / yes first). 0 for a
// market the simulator does not price.
uint32_t first_outcome(uint32_t market);

enum class ScoreModel : uint8_t {
  Goals,    // Poisson scoring per minute (soccer, hockey, handball, ...)
  Points,   // high scoring; priced with a normal approximation
  Sets,     // race to N sets
  Matchup,  // one winner at the end (combat, motor sport, golf head-to-heads)
};

struct SportDef {
  int32_t id;     // name: sport_name(id), protocol/sports.h
  double weight;  // share of simulated events
  ScoreModel model;
  double mean_per_team;  // goals/points per team per match (Goals/Points)
  double sd_diff;        // sd of the final margin (Points)
  int32_t length;        // regulation minutes (sets: minutes per set)
  int32_t periods;       // halves/quarters/...; sets: sets to win
  bool draw;             // 3-way match winner
  bool players;          // participants are people, not teams
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
