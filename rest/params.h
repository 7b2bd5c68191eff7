// Query parameters and event ids as the /v1 routes read them: each helper
// either yields a value or sends the 400 itself (and says so by returning
// false), so handlers stop at the first bad parameter with one line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/catalog/catalog.h"
#include "engine/core/snapshot.h"
#include "rest/call.h"

namespace oddsrelay::rest {

inline constexpr size_t kMaxIds = 100;  // event ids per request

std::optional<int64_t> parse_int(std::string_view s);

// Comma-separated ids, trimmed, empties dropped, duplicates kept once.
std::vector<std::string> split_ids(std::string_view s);

// The event an id of any accepted form names, or null.
const EventEntry* lookup(const Snapshot& s, std::string_view id);

// The events named by `ids` (1..100) that exist, each once; false with the
// 400 sent when there are none or too many.
// `missing`, when given, receives the asked ids that match no event (in
// the order asked, each once), for an answer's `not_found`.
bool resolve_ids(Call& c, const std::vector<std::string>& ids, std::vector<const EventEntry*>& out,
                 std::vector<std::string>* missing = nullptr);

// `sport`: absent, or a positive integer.
bool sport_param(Call& c, std::optional<int32_t>& sport);

// A 0/1 flag parameter.
bool flag_param(Call& c, const char* name, bool& out);

// `lang`: one of the catalog's codes; anything else resolves to English.
int lang_param(Call& c, const Catalog& cat, bool& given);

}  // namespace oddsrelay::rest
