// Encoded GET-form odds JSON per event version (docs/architecture.md step 3: "REST
// answers for hot reads are cached per version"). An event's entry is immutable
// and a new version is a new object, so the entry itself is the cache key:
// holding it keeps its address from being reused. Owned by the REST loop
// thread; bounded (cleared whole when it outgrows kMaxEntries).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "engine/event_entry.h"

namespace oddsrelay::rest {

class OddsCache {
 public:
  static constexpr size_t kMaxEntries = 50'000;

  // The odds object of `e` ({<market>: {<line>: ...}}), encoded once per version.
  const std::string& get(const std::shared_ptr<const EventEntry>& e);
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }
  size_t size() const { return slots_.size(); }

 private:
  struct Slot {
    std::shared_ptr<const EventEntry> version;
    std::string json;
  };
  std::unordered_map<uint64_t, Slot> slots_;
  uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace oddsrelay::rest
