// Encoded GET-form odds per event version (docs/architecture.md: REST
// answers for hot reads are cached per snapshot version). An event's entry
// is immutable and a new version is a new object, so the entry itself is
// the cache key: holding it keeps its address from being reused. Each slot
// holds the event's fragment of the answer, `"<id>":{<odds>}`, and, once a
// gzip answer needed it, that fragment deflated (rest/gzip_pieces.h): both
// are encoded once per version, whatever the requests. Owned by one REST
// loop; bounded (cleared whole, between answers, past kMaxEntries).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "engine/core/event_entry.h"
#include "rest/gzip_pieces.h"
#include "rest/tally.h"

namespace oddsrelay::rest {

class OddsCache {
 public:
  static constexpr size_t kMaxEntries = 50'000;

  struct Fragment {
    std::string json;  // "<id>":{<market>: {<line>: ...}}
    DeflatePiece gz;   // json deflated; valid when gz_ready
    bool gz_ready = false;
  };
  // Called before each answer's gets: empties the cache past kMaxEntries,
  // so the fragments an answer holds stay valid until it is sent.
  void trim() {
    if (slots_.size() >= kMaxEntries) {
      slots_.clear();
      size_.set(0);
    }
  }
  // The fragment of `e`, encoded once per version; valid until trim().
  Fragment& get(const std::shared_ptr<const EventEntry>& e);
  // Its deflated form, compressed on first use; null on a zlib failure.
  const DeflatePiece* deflated(Fragment& f);

  // Any thread.
  uint64_t hits() const { return hits_.get(); }
  uint64_t misses() const { return misses_.get(); }
  uint64_t deflates() const { return deflates_.get(); }
  size_t size() const { return size_.get(); }

 private:
  struct Slot {
    std::shared_ptr<const EventEntry> version;
    Fragment fragment;
  };
  std::unordered_map<uint64_t, Slot> slots_;
  Tally hits_, misses_, deflates_, size_;
};

}  // namespace oddsrelay::rest
