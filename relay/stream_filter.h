// What a /pt-ws stream may receive (docs/api.md, Streams): its key's
// permissions (channels and classes of events), and the filters its
// handshake named: sports=, events= and markets=. Live fan-out, connect
// snapshots and catch-up all ask this one question, once per bucket of
// streams that share a filter (pt_stream.h), never once per stream.
//
// sports= and the permissions pick whole frames. events= and markets= may
// also cut a frame: an evt: frame down to the admitted events, an odds:
// frame down to the admitted markets. A cut frame is encoded once per
// bucket from the entries the hub recorded (BatchFrame::parts), by copying
// bytes, not by encoding JSON again.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>

#include "relay/encoded_batch.h"

namespace oddsrelay::relay {

// Event lists are encoded once per class of events a key may see (its
// live and pre-match permissions), and a stream takes only those of its own
// classes, so a key without 'prematch' never receives a pre-match event.
struct StreamFilter {
  std::span<const int32_t> sports;  // sorted; empty = all
  bool evt = false, odds = false;
  uint8_t classes = 0;                  // kLiveEvents | kPrematchEvents its key sees
  std::span<const uint64_t> events{};   // event numbers, sorted; empty = all
  std::span<const uint32_t> markets{};  // market ids, sorted; empty = all

  bool everything() const { return sports.empty() && evt && odds && !cuts(); }
  // events= or markets=: frames may need cutting (narrow()).
  bool cuts() const { return !events.empty() || !markets.empty(); }
  bool wants_sport(int32_t s) const { return sports.empty() || std::binary_search(sports.begin(), sports.end(), s); }
  bool wants_event(uint64_t n) const { return events.empty() || std::binary_search(events.begin(), events.end(), n); }
  bool wants_market(uint32_t m) const {
    return markets.empty() || std::binary_search(markets.begin(), markets.end(), m);
  }
  // The whole frame's channel passes (an odds: frame of an admitted event,
  // an event list of the stream's classes), before any cut.
  bool admits(const LoopBatchFrame& f) const {
    if (!wants_sport(f.sport)) return false;
    return f.odds ? odds && wants_event(f.channel) : evt && f.events == classes;
  }
  // Does it keep this entry of an admitted frame?
  bool keeps(const LoopBatchFrame& f, const Part& p) const {
    return f.odds ? wants_market(static_cast<uint32_t>(p.id)) : wants_event(p.id);
  }
};

// The frame as a stream with `filter` receives it: nothing when the filter
// refuses it or keeps none of its entries; the frame itself when it keeps
// them all; else a new frame with only the kept entries (its markets cut
// to match). `encoded` counts the new frames.
std::optional<LoopBatchFrame> narrow(const LoopBatchFrame& f, const StreamFilter& filter, uint64_t* encoded = nullptr);

}  // namespace oddsrelay::relay
