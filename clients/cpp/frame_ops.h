// The C++ client's parse of one /pt-ws P frame (docs/api.md "/pt-ws"):
// `evt:<sport>` with {<event id>: event object | null} and
// `odds:<sport>:<event number>` with {<market id>: market object | null},
// turned into operations on the replica (replica.h) without touching it, so
// a group whose last frame does not parse leaves the replica as it was.
// One SAX pass over the frame's text: each market's digest sum (docs/api.md
// "State digest") is computed as it is read, and an operation points at
// the object's bytes in the frame instead of copying them, so parsing
// allocates nothing per outcome (the vectors keep their capacity).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace oddsrelay::client {

struct FrameOp {
  enum Kind : uint8_t {
    kEvent,   // set or remove (json empty) an event; `live` from its object
    kMarket,  // set or remove (json empty) a market of event `number`
    kBook,    // an odds: frame for event `number` (its book exists from now on)
  };
  Kind kind;
  bool live = false;
  uint64_t number = 0;
  std::string_view key;   // event id or market id, as the frame spells it
  std::string_view json;  // the object's text; empty: null, a removal
  uint64_t sum = 0;       // a market's digest sum (its outcome terms)
};

// The event number of an event id: the digits after its last '.' or '-'
// (docs/api.md "Event ids"); false if there are none.
bool event_number(std::string_view id, uint64_t& out);

// Appends the operations of one P frame's channel and body to `ops`; false
// (and `ops` as it was) if the frame is not one a client can apply.
class FrameParser {
 public:
  bool parse(std::string_view channel, std::string_view body, std::vector<FrameOp>& ops);

 private:
  struct Outcome {
    char id[24], price[24], flags[24];
    uint8_t id_len, price_len, flags_len;
  };
  std::vector<Outcome> outcomes_;  // one line's, until its `s` is known
  friend struct FrameHandler;
};

}  // namespace oddsrelay::client
