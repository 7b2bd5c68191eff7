// A market's sum of the client-visible digest (odds_digest.h).
#include "engine/core/odds_digest.h"

#include <algorithm>

#include "protocol/decimal.h"
#include "protocol/line_key.h"

// xxHash's own inline build of XXH64 for this file's loop, included after
// every header: xxhash.h then names it apart (XXH_INLINE_XXH64), and the
// headers' inline functions, parsed above, still call the library's.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace oddsrelay {

// Every market record the engine applies sums its outcomes' terms again
// (most of a record's outcomes move, so carrying the old sum over would
// hash more), which made this the applying thread's largest cost. So the
// text "<event>|<market>|<line key>|" is written once a line, each outcome
// continues it in place, and the writing goes through a local pointer
// into a local buffer (TermText's members, written through char pointers
// that may alias them, were reloaded at every byte). The text is
// outcome_term's, field for field (tests/engine/odds_digest_test.cc).
uint64_t market_digest(uint64_t event, const Market& m) {
  constexpr size_t kLead = kDecimalDigits<uint64_t> + 1 + kDecimalDigits<uint32_t> + 1 + kMaxLineKey + 1;
  constexpr size_t kTail = kDecimalDigits<uint32_t> + 1 + kDecimalDigits<int32_t> + 1 + kDecimalDigits<uint32_t> + 1 +
                           kDecimalDigits<uint8_t>;
  char buf[kLead + kTail];
  char* p = put_decimal(buf, event);
  *p++ = '|';
  p = put_decimal(p, m.id);
  *p++ = '|';
  char* const market_end = p;
  uint64_t sum = 0;
  for (const Line& l : m.lines) {
    if (l.count == 0) continue;
    const std::string_view key = l.key.view();  // at most kMaxLineKey bytes (LineKey's constructor)
    char* const line_end = std::copy(key.begin(), key.end(), market_end) + 1;
    line_end[-1] = '|';
    for (uint32_t i = 0; i < l.count; ++i) {
      const Outcome& o = m.outcomes[l.first + i];
      char* q = put_decimal(line_end, o.id);
      *q++ = '|';
      q = put_decimal(q, o.price);
      *q++ = '|';
      q = put_decimal(q, o.flags);
      *q++ = '|';
      q = put_decimal(q, l.suspended);
      sum += XXH64(buf, static_cast<size_t>(q - buf), 0);
    }
  }
  return sum;
}

}  // namespace oddsrelay
