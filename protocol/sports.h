// The sport id table (docs/api.md): the names /v1/sports serves and the ids
// the simulator draws from. The interface's table names 24 sports while its
// catalog counts 25; snooker (19) is the 25th, in the catalog only (the
// simulator draws no snooker events).
#pragma once

#include <cstdint>

namespace oddsrelay {

struct SportName {
  int32_t id;
  const char* name;
};

inline constexpr SportName kSportNames[] = {
    {1, "Soccer"},        {2, "Basketball"},    {3, "Baseball"},      {4, "Ice Hockey"},
    {5, "Tennis"},        {6, "Handball"},      {7, "Volleyball"},    {9, "Golf"},
    {10, "Boxing / MMA"}, {12, "Rugby League"}, {13, "Aussie Rules"}, {16, "American Football"},
    {17, "Cycling"},      {19, "Snooker"},      {20, "Table Tennis"}, {21, "Cricket"},
    {22, "Darts"},        {26, "Waterpolo"},    {29, "Futsal"},       {39, "Lacrosse"},
    {40, "Formula 1"},    {117, "MMA"},         {190, "Moto GP"},     {306, "Bowling"},
    {312, "Rugby Union"},
};

// The spec's name, or nullptr for an id outside the table.
inline const char* sport_name(int32_t id) {
  for (const auto& s : kSportNames)
    if (s.id == id) return s.name;
  return nullptr;
}

}  // namespace oddsrelay
