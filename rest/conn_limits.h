// The REST listener's connection limits (docs/api.md "Limits"): a key holds
// at most its `http_connections` HTTP connections at once, and connections
// that have only used keyless routes (pages, /healthz, /openapi.json) at most
// --http-connections-per-address per client address. The key is known only
// once a request's headers are read, so a connection counts against a key
// from its first request with that key (and against its address from its
// first keyless one) until it closes; one over the limit is answered 429
// and closed. The counts are exact across loops (protocol/api/key_slots.h,
// the same counter the relay keeps for ws_connections); the slot rides on
// the connection's Peer and is given back when the connection is freed.
#pragma once

#include <array>
#include <cstdint>

#include "protocol/api/api_keys.h"
#include "protocol/api/key_slots.h"
#include "rest/http_server.h"
#include "rest/vocabulary.h"

namespace oddsrelay::rest {

class ConnLimits {
 public:
  explicit ConnLimits(uint32_t per_address) : per_address_(per_address) {}
  // The connection holds a slot of `key` (taken now unless it already held
  // one); false when the key's slots are all taken.
  bool admit_key(Peer& peer, const ApiKey& key);
  // The same for a keyless route, by client address; a connection that
  // holds any slot already passes. 0 = no limit.
  bool admit_address(Peer& peer, const std::array<uint8_t, 16>& client);
  uint32_t held_by_key(const ApiKey& key) const;  // tests

 private:
  bool admit(Peer& peer, KeySlots& slots, uint8_t kind, uint64_t id, uint32_t limit);
  uint32_t per_address_;
  KeySlots keys_, addresses_;
};

}  // namespace oddsrelay::rest
