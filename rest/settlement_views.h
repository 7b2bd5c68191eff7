// /v1/settlements (docs/settlement.md "Response"): each event's settlement
// (engine/settlement/settlement.h) encoded as JSON once per final-score version (per
// entry version while the event is not over) and language, then served
// from the cache. Owned by one REST loop.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "engine/catalog/catalog.h"
#include "engine/core/event_entry.h"
#include "protocol/json_out.h"
#include "rest/tally.h"

namespace oddsrelay::rest {

class SettlementCache {
 public:
  static constexpr size_t kMaxEntries = 50'000;

  // The record of `e` ({"fixture_id": ..., "markets": ...}).
  const std::string& get(const std::shared_ptr<const EventEntry>& e, const Catalog& catalog, int lang,
                         bool include_inplay);
  uint64_t computed() const { return computed_.get(); }  // any thread
  uint64_t served() const { return served_.get(); }

 private:
  struct Slot {
    bool ended = false;
    uint32_t final_version = 0;
    std::shared_ptr<const EventEntry> version;  // while not ended
    std::string key;                            // display id it was encoded with
    std::string json;
  };
  // (event number, language, include_inplay): any event number, no packing.
  struct Key {
    uint64_t number;
    int lang;
    bool inplay;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<uint64_t>()(k.number * 64 + static_cast<uint64_t>(k.lang) * 2 + k.inplay);
    }
  };
  std::unordered_map<Key, Slot, KeyHash> slots_;
  uint64_t catalog_digest_ = 0;  // the catalog the slots were encoded with (a reload clears them)
  Tally computed_, served_;
};

}  // namespace oddsrelay::rest
