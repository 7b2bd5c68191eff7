// The terms of the client-visible state digest (docs/api.md "State
// digest"), without the engine's structures: one XXH64 (seed 0) of a text
// of '|'-separated fields per outcome and per listed event. The server
// (engine/core/odds_digest.h: each market's kept sum) and the C++ client
// (clients/cpp: its replica, from the frames' text) build the text here,
// so the two sides cannot drift apart.
//
//   outcome: "<event number>|<market id>|<line key>|<outcome id>|<price>|<flags>|<line s>"
//   event:   "e|<event number>"
#pragma once

#include <xxhash.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/decimal.h"

namespace oddsrelay {

// The text of one term, built field by field on the stack. 20 + 10 + a line
// key + 10 + 11 + 10 + 10 digits and 6 bars fit; a field that would not fit
// marks the text too long (ok() false), which no valid frame produces.
class TermText {
 public:
  TermText& add(std::string_view field) {
    if (!sep(field.size())) return *this;
    p_ = std::copy(field.begin(), field.end(), p_);
    return *this;
  }
  template <class Int>
  TermText& add_int(Int v) {
    if (!sep(kMaxDecimal)) return *this;
    p_ = put_decimal(p_, v);
    return *this;
  }
  bool ok() const { return ok_; }
  std::string_view text() const { return {buf_, static_cast<size_t>(p_ - buf_)}; }
  uint64_t hash() const { return XXH64(buf_, static_cast<size_t>(p_ - buf_), 0); }

 private:
  bool sep(size_t need) {
    if (static_cast<size_t>(buf_ + sizeof buf_ - p_) < need + 1) return ok_ = false;
    if (p_ != buf_) *p_++ = '|';
    return true;
  }
  char buf_[192];
  char* p_ = buf_;
  bool ok_ = true;
};

inline uint64_t outcome_term(uint64_t event, uint32_t market, std::string_view line_key, uint32_t outcome,
                             int32_t price, uint32_t flags, uint32_t line_s) {
  TermText t;
  t.add_int(event).add_int(market).add(line_key).add_int(outcome).add_int(price).add_int(flags).add_int(line_s);
  return t.hash();
}

inline uint64_t event_term(uint64_t event) {
  TermText t;
  t.add("e").add_int(event);
  return t.hash();
}

// The wire form: 16 lowercase hex digits.
inline std::string digest_hex(uint64_t d) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, d >>= 4) s[static_cast<size_t>(i)] = kHex[d & 15];
  return s;
}

}  // namespace oddsrelay
