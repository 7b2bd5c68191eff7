// /v1/settlements (SPEC.md "Settlement record"): each event's settlement
// (engine/settlement.h) encoded as JSON once per final-score version (per
// entry version while the event is not over) and language, then served
// from the cache. Owned by the REST thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "engine/catalog.h"
#include "engine/event_entry.h"
#include "protocol/json_out.h"

namespace oddsrelay::rest {

class SettlementCache {
 public:
  static constexpr size_t kMaxEntries = 50'000;

  // The record of `e` ({"fixture_id": ..., "markets": ...}).
  const std::string& get(const std::shared_ptr<const EventEntry>& e, const Catalog& catalog, int lang,
                         bool include_inplay);
  uint64_t computed() const { return computed_; }
  uint64_t served() const { return served_; }

 private:
  struct Slot {
    bool ended = false;
    uint32_t final_version = 0;
    std::shared_ptr<const EventEntry> version;  // while not ended
    std::string key;                            // display id it was encoded with
    std::string json;
  };
  std::unordered_map<uint64_t, Slot> slots_;
  uint64_t computed_ = 0, served_ = 0;
};

}  // namespace oddsrelay::rest
