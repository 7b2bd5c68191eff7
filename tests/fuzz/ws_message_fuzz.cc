// libFuzzer target for the /ws client message parser (relay/ws_message.h):
// any message is a subscribe, an unsubscribe or an error text for the
// client, never a crash; a subscription holds at most 200 distinct markets.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "relay/ws_message.h"

using namespace oddsrelay::relay;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  WsMessage m;
  const std::string bad = parse_ws_message(std::string_view(reinterpret_cast<const char*>(data), size), m);
  if (!bad.empty()) return 0;
  if (m.markets.size() > kMaxSubscribedMarkets || (!m.subscribe && !m.markets.empty())) std::abort();
  std::vector<uint32_t> sorted = m.markets;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end() ||
      std::find(sorted.begin(), sorted.end(), 0u) != sorted.end())
    std::abort();
  return 0;
}
