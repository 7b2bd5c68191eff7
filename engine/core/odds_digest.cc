// A market's sum of the client-visible digest (odds_digest.h).
#include "engine/core/odds_digest.h"

namespace oddsrelay {

uint64_t market_digest(uint64_t event, const Market& m) {
  uint64_t sum = 0;
  for (const Line& l : m.lines)
    for (uint32_t i = 0; i < l.count; ++i) {
      const Outcome& o = m.outcomes[l.first + i];
      sum += outcome_term(event, m.id, l.key.view(), o.id, o.price, o.flags, l.suspended);
    }
  return sum;
}

}  // namespace oddsrelay
