// Event ids as they appear on the wire (docs/api.md "Event ids"). Every
// form resolves to the numeric <event_number>, the one identity the engine
// keys state by:
//   s<provider>-<channel>.<number>   full key
//   s<provider>-<number>             full key without channel
//   s<provider>_l<channel>.<number>  live binding (inside `map`)
//   s<provider>_p<channel>.<number>  pre-match binding
//   <number>                         numeric tail
#pragma once

#include <cstdint>
#include <string_view>

namespace oddsrelay {

enum class IdForm : uint8_t { Invalid, Full, FullNoChannel, LiveBinding, PrematchBinding, Numeric };

struct ParsedId {
  IdForm form = IdForm::Invalid;
  uint64_t number = 0;        // valid unless form == Invalid
  std::string_view provider;  // "7" of "s7-..."; empty for Numeric
  std::string_view channel;   // empty when the form has none
  bool ok() const { return form != IdForm::Invalid; }
};

// Parses any accepted form. Garbage (empty, signs, spaces, overflow, a zero
// number, missing parts) gives form Invalid. Never allocates.
[[nodiscard]] ParsedId parse_event_id(std::string_view id);

}  // namespace oddsrelay
