// Hand-written JSON for the hottest shapes (the relay's odds frames, the
// snapshot file's markets): fields formatted on the stack and appended to
// the caller's buffer a run at a time, byte for byte what RapidJSON's
// writer (json_out.h) writes for the same values. Callers pass a bound on
// what each piece takes (Chunk::room), so nothing writes past the stack.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "protocol/decimal.h"
#include "protocol/json_out.h"
#include "protocol/line_key.h"

namespace oddsrelay::json {

// A line key (or its special) as JSON, escaped at worst to \u00XX a byte.
constexpr size_t kMaxKeyJson = 2 + 6 * kMaxLineKey;
// The most an integer takes: INT64_MIN, 20 characters.
constexpr size_t kMaxInt = 20;

// Formats on the stack and appends to `out` a run at a time: a call to
// std::string::append per field (or per outcome) costs more than the
// formatting.
class Chunk {
 public:
  explicit Chunk(std::string& out) : out_(out) {}
  ~Chunk() { flush(); }
  Chunk(const Chunk&) = delete;
  Chunk& operator=(const Chunk&) = delete;
  // Where to write at most `n` bytes (n <= kSize); `done` with the end of
  // what was written.
  char* room(size_t n) {
    if (static_cast<size_t>(buf_ + sizeof buf_ - p_) < n) flush();
    return p_;
  }
  void done(char* end) { p_ = end; }
  // Out of line: called once a buffer fills and at the end, and inlined
  // GCC 12 cannot see that room() never appends bytes not yet written.
  [[gnu::noinline]] void flush() {
    out_.append(buf_, static_cast<size_t>(p_ - buf_));
    p_ = buf_;
  }
  static constexpr size_t kSize = 2048;

 private:
  std::string& out_;
  char buf_[kSize];
  char* p_ = buf_;
};

// Writes "<id>": at `p` (at most kMaxIdKey bytes) and returns its end: the
// key json::id_key writes.
inline constexpr size_t kMaxIdKey = 13;
inline char* put_id_key(char* p, uint32_t id) {
  *p++ = '"';
  p = put_decimal(p, id);
  *p++ = '"';
  *p++ = ':';
  return p;
}
template <class Int>
char* put_int(char* p, Int v) {
  return put_decimal(p, v);
}
template <size_t N>
char* put_lit(char* p, const char (&lit)[N]) {
  std::memcpy(p, lit, N - 1);
  return p + N - 1;
}
// `s` (at most kMaxLineKey bytes) as a JSON string; escaped by RapidJSON in
// the rare case it needs it.
inline char* put_str(char* p, std::string_view s) {
  if (needs_escape(s)) {
    std::string escaped;
    append_str(escaped, s);
    return std::copy(escaped.begin(), escaped.end(), p);
  }
  *p++ = '"';
  p = std::copy(s.begin(), s.end(), p);
  *p++ = '"';
  return p;
}

}  // namespace oddsrelay::json
