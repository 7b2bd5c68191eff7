// A /ws client message, parsed (docs/api.md "/ws"): {"subscribe":{"event_id":
// <id>,"markets":["1001",...]}} or {"unsubscribe":{"event_id":<id>}}. Bytes
// in, a value or the error text the client is sent out: no stream state and
// no I/O, so the stream (ws_stream.cc), the unit tests and the ws_message
// fuzz target drive the same code. The JSON goes through protocol/json_in.h
// with the request limits, so no message nests past 64 levels.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace oddsrelay::relay {

inline constexpr size_t kMaxSubscribedMarkets = 200;  // market ids in one subscription

struct WsMessage {
  bool subscribe = false;         // else unsubscribe
  std::string event_id;           // as sent: a string, an unsigned number's digits, or "" for neither
  std::vector<uint32_t> markets;  // subscribe: each id once, in the order sent; empty: every market
  // A bad "markets" list: reported only once the event is known to exist,
  // so a message naming an unknown event says that first.
  std::string markets_error;
};

// Parses `text` into `out`; the error message for the client when the
// message is not one of the two, else empty.
std::string parse_ws_message(std::string_view text, WsMessage& out);

}  // namespace oddsrelay::relay
