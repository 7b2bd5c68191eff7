#include "rest/conn_limits.h"

#include <cstring>
#include <memory>

namespace oddsrelay::rest {

namespace {

enum SlotKind : uint8_t { kNone = 0, kKey = 1, kAddress = 2 };

// A key's id: the first bytes of its digest (as the relay counts streams).
uint64_t key_id(const ApiKey& key) {
  uint64_t id = 0;
  std::memcpy(&id, key.digest.data(), sizeof id);
  return id;
}

// An address's id: FNV-1a of its 16 bytes (a collision merges two
// addresses' counts, never splits one).
uint64_t address_id(const std::array<uint8_t, 16>& ip) {
  uint64_t h = 1469598103934665603ull;
  for (uint8_t b : ip) h = (h ^ b) * 1099511628211ull;
  return h;
}

// Gives the slot back when the connection's last hold goes.
struct Hold {
  Hold(KeySlots* s, uint64_t i) : slots(s), id(i) {}
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;
  ~Hold() { slots->give_back(id); }
  KeySlots* slots;
  uint64_t id;
};

}  // namespace

bool ConnLimits::admit(Peer& peer, KeySlots& slots, uint8_t kind, uint64_t id, uint32_t limit) {
  if (peer.slot_kind == kind && peer.slot_id == id) return true;
  if (!slots.take(id, limit)) return false;
  peer.slot = std::make_shared<Hold>(&slots, id);  // gives back any slot held before
  peer.slot_kind = kind;
  peer.slot_id = id;
  return true;
}

bool ConnLimits::admit_key(Peer& peer, const ApiKey& key) {
  return admit(peer, keys_, kKey, key_id(key), key.http_connections);
}

bool ConnLimits::admit_address(Peer& peer, const std::array<uint8_t, 16>& client) {
  if (peer.slot_kind != kNone || per_address_ == 0) return true;
  return admit(peer, addresses_, kAddress, address_id(client), per_address_);
}

uint32_t ConnLimits::held_by_key(const ApiKey& key) const { return keys_.held(key_id(key)); }

}  // namespace oddsrelay::rest
