#include "tools/oddsload/frame_fields.h"

#include <string.h>

#include <algorithm>
#include <charconv>

namespace oddsrelay::load {

namespace {

// Past the string that starts at `p` (on its opening quote); npos if it
// does not end.
size_t skip_string(std::string_view s, size_t p) {
  for (++p; p < s.size(); ++p) {
    if (s[p] == '\\')
      ++p;
    else if (s[p] == '"')
      return p + 1;
  }
  return std::string_view::npos;
}

// Past the value that starts at `p`: a string, a nested array or object
// (brackets counted outside strings), or a bare token up to , } or ].
size_t skip_value(std::string_view s, size_t p) {
  if (p >= s.size()) return std::string_view::npos;
  if (s[p] == '"') return skip_string(s, p);
  if (s[p] != '[' && s[p] != '{') {
    while (p < s.size() && s[p] != ',' && s[p] != '}' && s[p] != ']') ++p;
    return p;
  }
  int depth = 0;
  while (p < s.size()) {
    const char c = s[p];
    if (c == '"') {
      p = skip_string(s, p);
      if (p == std::string_view::npos) return p;
      continue;
    }
    if (c == '[' || c == '{') ++depth;
    if ((c == ']' || c == '}') && --depth == 0) return p + 1;
    ++p;
  }
  return std::string_view::npos;
}

// The member's number into `v`, and `has` set, when the value is one.
void number(std::string_view value, double& v, bool& has) {
  has = std::from_chars(value.data(), value.data() + value.size(), v).ec == std::errc();
}

void take(InfoFields& f, std::string_view key, std::string_view value) {
  if (key == "seq")
    number(value, f.seq, f.has_seq);
  else if (key == "from")
    number(value, f.from, f.has_from);
  else if (key == "at")
    number(value, f.at, f.has_at);
  else if (key == "conflated")
    number(value, f.conflated, f.has_conflated);
  else if (key == "arrived_us")
    number(value, f.arrived_us, f.has_arrived);
  else if (key == "applied_us")
    number(value, f.applied_us, f.has_applied);
  else if (key == "encoded_us")
    number(value, f.encoded_us, f.has_encoded);
  else if (key == "ready")
    f.ready = true;
}

size_t skip_space(std::string_view s, size_t p) {
  while (p < s.size() && (s[p] == ' ' || s[p] == '\n' || s[p] == '\r' || s[p] == '\t')) ++p;
  return p;
}

}  // namespace

bool read_info(std::string_view s, InfoFields& out) {
  constexpr size_t npos = std::string_view::npos;
  size_t p = skip_space(s, 0);
  if (p >= s.size() || s[p] != '{') return false;
  p = skip_space(s, p + 1);
  if (p < s.size() && s[p] == '}') return true;
  while (p < s.size() && s[p] == '"') {
    const size_t key_end = skip_string(s, p);
    if (key_end == npos) return false;
    const std::string_view key = s.substr(p + 1, key_end - p - 2);
    p = skip_space(s, key_end);
    if (p >= s.size() || s[p] != ':') return false;
    p = skip_space(s, p + 1);
    const size_t end = skip_value(s, p);
    if (end == npos) return false;
    take(out, key, s.substr(p, end - p));
    p = skip_space(s, end);
    if (p < s.size() && s[p] == '}') return true;
    if (p >= s.size() || s[p] != ',') return false;
    p = skip_space(s, p + 1);
  }
  return false;
}

int64_t newest_ls(std::string_view json) {
  // memmem skips ahead by the pattern's length: a search that stopped at
  // every quote of the frame was a sixth of the client's core.
  static constexpr char kKey[] = "\"ls\":";
  constexpr size_t kLen = sizeof kKey - 1;
  int64_t newest = 0;
  const char* p = json.data();
  const char* const end = json.data() + json.size();
  while (const void* hit = memmem(p, static_cast<size_t>(end - p), kKey, kLen)) {
    p = static_cast<const char*>(hit) + kLen;
    int64_t v = 0;
    const auto r = std::from_chars(p, end, v);
    if (r.ec == std::errc()) newest = std::max(newest, v);
    p = r.ptr;
  }
  return newest;
}

}  // namespace oddsrelay::load
