// Which permission each piece of data needs: the one table (docs/api.md
// "Permissions") that every REST route, every /rdstn command and every
// stream frame is checked against. Routes and commands declare the data
// their answer carries; the REST router (rest/router.cc) and the relay's
// fan-out (relay/pt_stream.cc) compare that with the key's permissions in one
// place each, before anything is sent.
#pragma once

#include <cstdint>
#include <string>

#include "protocol/api/api_keys.h"

namespace oddsrelay::api {

enum class Data : uint8_t {
  LiveEvent,      // the event object of a live event, wherever it appears
  PrematchEvent,  // the event object of a pre-match event
  Price,          // any price: odds, odds frames, market messages
  Dictionary,     // the market catalog: names, codes, tab layouts
  Score,          // score records
  Settlement,     // settlement records
  Widget,         // the match tracker's data and page
  Stream,         // signed stream URLs
};

constexpr uint32_t permission_for(Data d) {
  switch (d) {
    case Data::LiveEvent:
      return kPermLive;
    case Data::PrematchEvent:
      return kPermPrematch;
    case Data::Price:
      return kPermOdds;
    case Data::Dictionary:
      return kPermOdds;  // the "Odds/Markets" permission
    case Data::Score:
      return kPermScores;
    case Data::Settlement:
      return kPermScores;
    case Data::Widget:
      return kPermWidget;
    case Data::Stream:
      return kPermStream;
  }
  return ~0u;  // unknown data: nobody may read it
}

constexpr Data event_data(bool live) { return live ? Data::LiveEvent : Data::PrematchEvent; }

// What one answer carries: data it certainly holds (every permission of
// `all` is needed) and, for a route that may hold one of several kinds
// before the request is resolved, a set of which one suffices (`any`).
struct Needs {
  uint32_t all = 0;
  uint32_t any = 0;  // 0: no such set

  constexpr Needs& add(Data d) {
    all |= permission_for(d);
    return *this;
  }
  constexpr Needs& add_any(Data d) {
    any |= permission_for(d);
    return *this;
  }
};

// The permissions `granted` lacks for `n`: the whole `any` set when none of
// it is granted, else the lowest missing bit of `all`; 0 when admitted.
constexpr uint32_t missing(const Needs& n, uint32_t granted) {
  if (n.any && !(n.any & granted)) return n.any;
  const uint32_t lack = n.all & ~granted;
  return lack & (~lack + 1);
}

// "API key lacks the 'odds' permission" ("'live' or 'prematch'" for a set).
std::string refusal(uint32_t missing_permissions);

}  // namespace oddsrelay::api
