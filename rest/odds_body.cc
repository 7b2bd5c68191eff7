// rest/odds_body.h: the POST /v1/odds body parser.
#include "rest/odds_body.h"

#include <rapidjson/document.h>

#include <algorithm>

#include "protocol/api/errors.h"
#include "protocol/json_in.h"
#include "rest/vocabulary.h"

namespace oddsrelay::rest {

std::string parse_odds_body(std::string_view body, OddsBody& out, size_t max_ids) {
  rapidjson::Document d;
  const json::InResult parsed = json::parse(body, d);
  if (parsed.over_limit()) return err::bad_body(parsed.message(json::kRequestLimits));
  if (!parsed || !d.IsObject() || !d.HasMember("market") || !d["market"].IsUint() || !d.HasMember("events") ||
      !d["events"].IsArray() || (d.HasMember("sport") && !d["sport"].IsInt()))
    return err::kBadOddsBody;
  for (const auto& v : d["events"].GetArray()) {
    if (!v.IsString()) return err::kBadOddsBody;
    std::string_view id(v.GetString(), v.GetStringLength());
    // A repeated id is counted once, as on GET: it does not use up the limit.
    if (std::find(out.ids.begin(), out.ids.end(), id) == out.ids.end()) out.ids.emplace_back(id);
    if (out.ids.size() > max_ids) break;
  }
  if (d.HasMember("sport")) out.sport = d["sport"].GetInt();
  out.market = d["market"].GetUint();
  return {};
}

}  // namespace oddsrelay::rest
