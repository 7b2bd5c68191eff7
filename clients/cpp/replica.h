// The C++ client's copy of what its /pt-ws stream carries (docs/clients.md):
// event objects by id, live odds by event number and market id, and the
// state digest of both (docs/api.md "State digest"), kept as operations are
// applied: each market's sum is held beside it, so replacing a market costs
// its own terms, never a pass over the state. Pure state, no I/O: the
// stream machine (stream_machine.h) decides when a group is applied (at its
// INFO, never half-way) and the unit tests drive it operation by operation.
//
// Objects are kept as the JSON text the frames carried; a market's string
// is reassigned in place when it changes, so applying a frame allocates per
// new market or event at most, never per outcome.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>

#include "clients/cpp/frame_ops.h"

namespace oddsrelay::client {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
template <class V>
using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

// The /v1/odds `data` shape: {event id: {market id: market object text}}.
using OddsData = std::map<std::string, std::map<std::string, std::string>>;

class ReplicaState {
 public:
  struct Event {
    uint64_t number = 0;
    bool live = false;
    std::string json;
  };
  struct Market {
    std::string json;
    uint64_t sum = 0;
  };
  using Book = StringMap<Market>;

  // The digest of everything held: e| terms of the listed events and the
  // terms of every outcome (what a verify=1 INFO carries).
  uint64_t digest() const { return event_total_ + odds_total_; }
  // The REST formula over data(): outcome terms only.
  uint64_t odds_digest() const { return odds_total_; }

  void apply(const FrameOp& op);
  void clear();

  const StringMap<Event>& events() const { return events_; }
  const std::unordered_map<uint64_t, Book>& odds() const { return odds_; }
  // The /v1/odds `data` shape: every live listed event (`{}` without
  // markets) and any other event whose odds the stream sent (keyed by its
  // number when the stream does not list it).
  OddsData data() const;

 private:
  void drop_odds(uint64_t number);

  StringMap<Event> events_;
  std::unordered_map<uint64_t, Book> odds_;
  uint64_t event_total_ = 0, odds_total_ = 0;
};

}  // namespace oddsrelay::client
