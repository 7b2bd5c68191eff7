#include "rest/params.h"

#include <algorithm>
#include <charconv>
#include <unordered_set>

#include "protocol/api/errors.h"
#include "protocol/event_id.h"

namespace oddsrelay::rest {

std::optional<int64_t> parse_int(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::vector<std::string> split_ids(std::string_view s) {
  std::vector<std::string> out;
  while (!s.empty()) {
    size_t c = s.find(',');
    std::string_view id = s.substr(0, c);
    while (!id.empty() && id.front() == ' ') id.remove_prefix(1);
    while (!id.empty() && id.back() == ' ') id.remove_suffix(1);
    if (!id.empty() && std::find(out.begin(), out.end(), id) == out.end()) out.emplace_back(id);
    if (c == std::string_view::npos) break;
    s.remove_prefix(c + 1);
  }
  return out;
}

const EventEntry* lookup(const Snapshot& s, std::string_view id) {
  ParsedId p = parse_event_id(id);
  return p.ok() ? s.events.find(p.number) : nullptr;
}

bool resolve_ids(Call& c, const std::vector<std::string>& ids, std::vector<const EventEntry*>& out,
                 std::vector<std::string>* missing) {
  if (ids.empty()) {
    c.error(400, err::kMissingIds);
    return false;
  }
  if (ids.size() > kMaxIds) {
    c.error(400, err::kTooManyIds);
    return false;
  }
  std::unordered_set<uint64_t> seen;
  for (const auto& id : ids) {
    const EventEntry* e = lookup(*c.snap, id);
    if (e && seen.insert(e->number).second) out.push_back(e);
    if (!e && missing && std::find(missing->begin(), missing->end(), id) == missing->end()) missing->push_back(id);
  }
  return true;
}

bool sport_param(Call& c, std::optional<int32_t>& sport) {
  auto v = c.param("sport");
  if (!v || v->empty()) return true;
  auto n = parse_int(*v);
  if (!n || *n <= 0 || *n > INT32_MAX) {
    c.error(400, err::kBadSport);
    return false;
  }
  sport = static_cast<int32_t>(*n);
  return true;
}

bool flag_param(Call& c, const char* name, bool& out) {
  auto v = c.param(name);
  if (!v || v->empty() || *v == "0") return (out = false, true);
  if (*v == "1") return (out = true, true);
  c.error(400, err::bad_flag(name));
  return false;
}

int lang_param(Call& c, const Catalog& cat, bool& given) {
  auto v = c.param("lang");
  given = v && !v->empty();
  int i = given ? cat.lang_index(*v) : 0;
  return i < 0 ? 0 : i;
}

}  // namespace oddsrelay::rest
