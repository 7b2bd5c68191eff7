// The outcome and event terms of the client-visible digest (odds_digest.h).
#include "engine/core/odds_digest.h"

#include <xxhash.h>

#include <algorithm>
#include <charconv>

namespace oddsrelay {

namespace {

template <class T>
char* put(char* p, T v) {
  return std::to_chars(p, p + 24, v).ptr;
}

}  // namespace

uint64_t outcome_term(uint64_t event, uint32_t market, std::string_view line_key, uint32_t outcome, int32_t price,
                      uint32_t flags, uint32_t line_s) {
  // 20 + 10 + kMaxLineKey + 10 + 11 + 10 + 10 digits and 6 bars fit.
  char buf[128];
  char* p = put(buf, event);
  *p++ = '|';
  p = put(p, market);
  *p++ = '|';
  p = std::copy(line_key.begin(), line_key.end(), p);
  *p++ = '|';
  p = put(p, outcome);
  *p++ = '|';
  p = put(p, price);
  *p++ = '|';
  p = put(p, flags);
  *p++ = '|';
  p = put(p, line_s);
  return XXH64(buf, static_cast<size_t>(p - buf), 0);
}

uint64_t event_term(uint64_t event) {
  char buf[24] = {'e', '|'};
  char* p = put(buf + 2, event);
  return XXH64(buf, static_cast<size_t>(p - buf), 0);
}

uint64_t market_digest(uint64_t event, const Market& m) {
  uint64_t sum = 0;
  for (const Line& l : m.lines)
    for (uint32_t i = 0; i < l.count; ++i) {
      const Outcome& o = m.outcomes[l.first + i];
      sum += outcome_term(event, m.id, l.key.view(), o.id, o.price, o.flags, l.suspended);
    }
  return sum;
}

std::string digest_hex(uint64_t d) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, d >>= 4) s[static_cast<size_t>(i)] = kHex[d & 15];
  return s;
}

}  // namespace oddsrelay
