// A market's sum of the client-visible digest (odds_digest.h).
#include "engine/core/odds_digest.h"

namespace oddsrelay {

// Every market record sums its outcomes' terms again (most of a record's
// outcomes move), so a line's leading fields are written once and each
// outcome's text continues from them: the same text as outcome_term's.
uint64_t market_digest(uint64_t event, const Market& m) {
  uint64_t sum = 0;
  TermText t;
  t.add_int(event).add_int(m.id);
  const size_t market_end = t.size();
  for (const Line& l : m.lines) {
    if (l.count == 0) continue;
    t.cut(market_end).add(l.key.view());
    const size_t line_end = t.size();
    for (uint32_t i = 0; i < l.count; ++i) {
      const Outcome& o = m.outcomes[l.first + i];
      sum += t.cut(line_end).add_int(o.id).add_int(o.price).add_int(o.flags).add_int(uint32_t{l.suspended}).hash();
    }
  }
  return sum;
}

}  // namespace oddsrelay
