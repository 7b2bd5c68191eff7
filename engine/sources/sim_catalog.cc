#include "engine/sources/sim_catalog.h"

#include <array>
#include <map>
#include <mutex>

namespace oddsrelay::sim {
namespace {

constexpr SportDef kSports[] = {
    // id  weight model                mean   sdD  len per draw  players
    {1, 30, ScoreModel::Goals, 1.35, 0, 90, 2, true, false},
    {2, 10, ScoreModel::Points, 108, 12, 48, 4, false, false},
    {3, 4, ScoreModel::Goals, 4.3, 0, 90, 9, false, false},
    {4, 7, ScoreModel::Goals, 2.9, 0, 60, 3, true, false},
    {5, 10, ScoreModel::Sets, 0, 0, 12, 2, false, true},
    {6, 3, ScoreModel::Goals, 27, 0, 60, 2, true, false},
    {7, 3, ScoreModel::Sets, 0, 0, 8, 3, false, false},
    {9, 1, ScoreModel::Matchup, 0, 0, 60, 1, false, true},
    {10, 1, ScoreModel::Matchup, 0, 0, 36, 1, false, true},
    {12, 1, ScoreModel::Points, 22, 14, 80, 2, false, false},
    {13, 1, ScoreModel::Points, 82, 28, 80, 4, false, false},
    {16, 3, ScoreModel::Points, 23, 13, 60, 4, false, false},
    {17, 1, ScoreModel::Matchup, 0, 0, 60, 1, false, true},
    {20, 4, ScoreModel::Sets, 0, 0, 3, 3, false, true},
    {21, 2, ScoreModel::Points, 160, 35, 90, 2, false, false},
    {22, 2, ScoreModel::Sets, 0, 0, 5, 3, false, true},
    {26, 1, ScoreModel::Goals, 9, 0, 32, 4, true, false},
    {29, 2, ScoreModel::Goals, 3, 0, 40, 2, true, false},
    {39, 1, ScoreModel::Goals, 11, 0, 60, 4, false, false},
    {40, 1, ScoreModel::Matchup, 0, 0, 90, 1, false, true},
    {117, 2, ScoreModel::Matchup, 0, 0, 15, 1, false, true},
    {190, 1, ScoreModel::Matchup, 0, 0, 45, 1, false, true},
    {306, 1, ScoreModel::Points, 210, 25, 30, 1, false, true},
    {312, 2, ScoreModel::Points, 24, 13, 80, 2, false, false},
};

constexpr Country kCountries[] = {
    {1, "England", "GB"}, {2, "Spain", "ES"},       {3, "Germany", "DE"},    {4, "Italy", "IT"},
    {5, "France", "FR"},  {6, "Netherlands", "NL"}, {7, "Portugal", "PT"},   {8, "USA", "US"},
    {9, "Brazil", "BR"},  {10, "Argentina", "AR"},  {11, "Australia", "AU"}, {12, "Japan", "JP"},
    {13, "Sweden", "SE"}, {14, "Poland", "PL"},     {15, "Turkey", "TR"},    {16, "International", "XX"},
};

constexpr const char* kCities[] = {
    "Arlington", "Brighton",  "Cordoba", "Dortmund", "Eindhoven", "Florence", "Geneva",       "Hamburg", "Istanbul",
    "Jena",      "Kyoto",     "Lisbon",  "Madrid",   "Naples",    "Oporto",   "Porto Alegre", "Quebec",  "Rosario",
    "Seville",   "Turin",     "Utrecht", "Valencia", "Warsaw",    "York",     "Zaragoza",     "Bilbao",  "Lyon",
    "Marseille", "Bremen",    "Malmo",   "Krakow",   "Ankara",    "Osaka",    "Perth",        "Denver",  "Boston",
    "Chicago",   "Milwaukee", "Phoenix", "Portland", "Leeds",     "Bristol",  "Genoa",        "Bologna", "Nantes",
    "Toulouse",  "Gdansk",    "Izmir",   "Nagoya",   "Adelaide",  "Santos",   "Recife",
};
constexpr const char* kClubSuffix[] = {"FC", "United", "City", "Athletic", "Rovers", "Sporting", "Wanderers", "SC"};
constexpr const char* kMascots[] = {"Hawks", "Bears",  "Wolves", "Falcons", "Sharks",
                                    "Storm", "Titans", "Kings",  "Rangers", "Comets"};
constexpr const char* kFirst[] = {"A.", "B.", "C.", "D.", "E.", "F.", "G.", "H.", "J.",
                                  "K.", "L.", "M.", "N.", "P.", "R.", "S.", "T.", "V."};
constexpr const char* kLast[] = {
    "Almeida",  "Berg",   "Costa",  "Dvorak", "Eriksen",   "Fischer",   "Garcia",  "Horvat", "Ivanov",  "Jansen",
    "Kowalski", "Larsen", "Moreau", "Novak",  "Oliveira",  "Petrov",    "Quinn",   "Rossi",  "Schmidt", "Tanaka",
    "Uchida",   "Varga",  "Weber",  "Yilmaz", "Zielinski", "Lindqvist", "Moretti", "Sato",
};

// League names per sport, each with its country; priority follows order.
struct LeagueDef {
  int32_t sport;
  const char* name;
  int country;  // index+1 into kCountries
};
constexpr LeagueDef kLeagues[] = {
    {1, "Premier League", 1},
    {1, "LaLiga", 2},
    {1, "Bundesliga", 3},
    {1, "Serie A", 4},
    {1, "Ligue 1", 5},
    {1, "Eredivisie", 6},
    {1, "Primeira Liga", 7},
    {1, "Championship", 1},
    {1, "Serie A Brazil", 9},
    {1, "Liga Profesional", 10},
    {1, "J1 League", 12},
    {1, "Ekstraklasa", 14},
    {2, "NBA", 8},
    {2, "EuroLeague", 16},
    {2, "Liga ACB", 2},
    {2, "NBL", 11},
    {3, "MLB", 8},
    {3, "NPB", 12},
    {4, "NHL", 8},
    {4, "SHL", 13},
    {4, "DEL", 3},
    {5, "ATP Masters", 16},
    {5, "WTA 1000", 16},
    {5, "ATP Challenger", 16},
    {6, "EHF Champions League", 16},
    {6, "Handball-Bundesliga", 3},
    {7, "CEV Champions League", 16},
    {7, "SuperLega", 4},
    {9, "PGA Tour Matchups", 8},
    {10, "Boxing Title Fights", 16},
    {12, "NRL", 11},
    {12, "Super League", 1},
    {13, "AFL", 11},
    {16, "NFL", 8},
    {16, "NCAAF", 8},
    {17, "Tour Matchups", 16},
    {20, "TT Elite Series", 14},
    {20, "WTT Contender", 16},
    {21, "IPL", 16},
    {21, "The Hundred", 1},
    {22, "PDC World Series", 16},
    {22, "Premier League Darts", 1},
    {26, "LEN Champions League", 16},
    {29, "UEFA Futsal", 16},
    {39, "PLL", 8},
    {40, "Grand Prix Matchups", 16},
    {117, "UFC", 8},
    {190, "MotoGP Matchups", 16},
    {306, "PBA Tour", 8},
    {312, "Premiership Rugby", 1},
    {312, "Top 14", 5},
    {312, "Six Nations", 16},
};

}  // namespace

std::span<const SportDef> sports() { return kSports; }

uint32_t first_outcome(uint32_t market) {
  // tests/engine/catalog_test.cc checks these against the built-in catalog.
  switch (market) {
    case kMatchWinner:
      return 2001;
    case kCorrectScore:
      return 2004;
    case kAsianHandicap:
      return 2006;
    case kGoalsOverUnder:
      return 2008;
    case kDrawNoBet:
      return 2010;
    case kAsianHandicapLive:
      return 2012;
    case kCorrectScoreLive:
      return 2014;
    case kGoalsOverUnderLive:
      return 2016;
    case kBothTeamsToScore:
      return 2018;
    case kFirstHalfHandicap:
      return 2020;
    case kTotalOverUnder:
      return 2022;
    case kTotalCorners:
      return 2024;
  }
  return 0;
}

const SportDef* find_sport(int32_t id) {
  for (const auto& s : kSports)
    if (s.id == id) return &s;
  return nullptr;
}

const std::vector<Tournament>& tournaments(int32_t sport) {
  static std::once_flag once;
  static std::map<int32_t, std::vector<Tournament>> all;
  std::call_once(once, [] {
    for (const auto& l : kLeagues) {
      auto& v = all[l.sport];
      v.push_back(Tournament{l.sport * 1000 + static_cast<int64_t>(v.size()) + 1, l.name,
                             static_cast<int64_t>(v.size()) + 1, &kCountries[l.country - 1]});
    }
  });
  return all.at(sport);
}

std::string participant(const SportDef& s, uint64_t i) {
  std::string n;
  if (s.players) {
    constexpr size_t nf = std::size(kFirst), nl = std::size(kLast);
    n.append(kFirst[i % nf]).append(" ").append(kLast[(i / nf) % nl]);
    if (uint64_t round = i / (nf * nl)) n.append(" ").append(std::to_string(round + 1));
    return n;
  }
  constexpr size_t nc = std::size(kCities);
  const char* city = kCities[i % nc];
  if (s.model == ScoreModel::Points || s.id == 4 || s.id == 3 || s.id == 39)
    n.append(city).append(" ").append(kMascots[(i / nc) % std::size(kMascots)]);
  else
    n.append(city).append(" ").append(kClubSuffix[(i / nc) % std::size(kClubSuffix)]);
  return n;
}

}  // namespace oddsrelay::sim
