// libFuzzer target for protocol/json_in.h, the one entry point of JSON from
// outside: whatever the bytes, no crash and no recursion per level; under
// every set of limits a refusal names a reason, and what is taken is what
// RapidJSON's own parser takes (same document), while what RapidJSON takes
// and this refuses was refused for a limit, never as "not JSON".
#include <rapidjson/document.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "protocol/json_in.h"

using namespace oddsrelay::json;

namespace {

// The same document: members in order (GenericValue's == looks members up
// by name, which a key twice, as the feed's limits take, does not survive),
// integers exact, decimals within RapidJSON's default precision (its exact
// mode trips UBSan in its own code on "0e99"; ours is exact).
template <typename A, typename B>
bool same(const A& a, const B& b) {
  if (a.GetType() != b.GetType()) return false;
  if (a.IsNumber()) {
    if (a.IsDouble() != b.IsDouble()) return false;
    if (!a.IsDouble())
      return a.IsInt64() ? b.IsInt64() && a.GetInt64() == b.GetInt64() : a.GetUint64() == b.GetUint64();
    const double x = a.GetDouble(), y = b.GetDouble();
    return x == y || std::fabs(x - y) <= 1e-14 * std::max(std::fabs(x), std::fabs(y));
  }
  if (a.IsString())
    return std::string_view(a.GetString(), a.GetStringLength()) == std::string_view(b.GetString(), b.GetStringLength());
  if (a.IsArray()) {
    if (a.Size() != b.Size()) return false;
    for (rapidjson::SizeType i = 0; i < a.Size(); ++i)
      if (!same(a[i], b[i])) return false;
    return true;
  }
  if (a.IsObject()) {
    if (a.MemberCount() != b.MemberCount()) return false;
    for (auto x = a.MemberBegin(), y = b.MemberBegin(); x != a.MemberEnd(); ++x, ++y)
      if (!same(x->name, y->name) || !same(x->value, y->value)) return false;
    return true;
  }
  return a == b;  // null, true, false
}

void check(std::string_view text, const InLimits& limits) {
  Doc ours;
  const InResult r = parse(text, ours, limits);
  if (!r && !ours.IsNull()) std::abort();
  if (!r && r.message(limits).empty()) std::abort();
  // RapidJSON's recursive parser only where the depth is known to be small.
  if (r.error == InError::TooDeep) return;
  Doc theirs;
  theirs.Parse<rapidjson::kParseValidateEncodingFlag>(text.data(), text.size());
  if (r) {
    if (theirs.HasParseError() || !same(theirs, ours)) std::abort();
  } else if (!theirs.HasParseError() && r.error == InError::Syntax && text.find('\0') == std::string_view::npos &&
             !(text.starts_with('\xef') || text.starts_with('\xbb') || text.starts_with('\xbf'))) {
    std::abort();  // (RapidJSON takes a NUL for the end of the text, and skips a byte-order mark; we do neither)
  }
  std::string copy(text);
  rapidjson::MemoryPoolAllocator<> values, stack;
  PoolDoc insitu(&values, 1024, &stack);
  const InResult ri = parse_insitu(copy.data(), insitu, limits);
  // In situ ends at the first NUL; elsewhere the two agree.
  if (text.find('\0') == std::string_view::npos && (ri.error != r.error || (ri && !same(insitu, ours)))) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  check(text, kRequestLimits);
  check(text, kFeedLimits);
  InLimits tight{4, 3, 3, 8, 6, true};
  check(text, tight);
  return 0;
}
