// relay/ws_message.h: the /ws client message parser.
#include "relay/ws_message.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <charconv>

#include "protocol/json_in.h"

namespace oddsrelay::relay {
namespace {

// A market id as a number or its digits; 0 for anything else.
uint32_t market_id(const rapidjson::Value& m) {
  if (m.IsUint()) return m.GetUint();
  if (!m.IsString()) return 0;
  uint32_t id = 0;
  std::string_view t(m.GetString(), m.GetStringLength());
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), id);
  return ec == std::errc() && p == t.data() + t.size() ? id : 0;
}

std::string read_markets(const rapidjson::Value& mv, std::vector<uint32_t>& out) {
  if (!mv.IsArray() || mv.Size() > kMaxSubscribedMarkets) return "Invalid markets: expected at most 200 market ids";
  for (const auto& m : mv.GetArray()) {
    const uint32_t id = market_id(m);
    if (id == 0) return "Invalid markets: expected market ids such as \"1001\"";
    if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
  }
  return {};
}

}  // namespace

std::string parse_ws_message(std::string_view text, WsMessage& out) {
  rapidjson::Document d;
  const json::InResult parsed = json::parse(text, d);
  if (parsed.over_limit()) return "Malformed message: " + parsed.message(json::kRequestLimits);
  if (!parsed || !d.IsObject()) return "Malformed message: expected a JSON object";
  out.subscribe = d.HasMember("subscribe");
  const bool unsub = d.HasMember("unsubscribe");
  const rapidjson::Value* body = out.subscribe ? &d["subscribe"] : unsub ? &d["unsubscribe"] : nullptr;
  if (!body || !body->IsObject() || !body->HasMember("event_id"))
    return "Unknown message: expected {\"subscribe\":{\"event_id\":...,\"markets\":[...]}}";
  const rapidjson::Value& idv = (*body)["event_id"];
  out.event_id = idv.IsString()   ? std::string(idv.GetString(), idv.GetStringLength())
                 : idv.IsUint64() ? std::to_string(idv.GetUint64())
                                  : std::string();
  if (out.subscribe && body->HasMember("markets")) out.markets_error = read_markets((*body)["markets"], out.markets);
  return {};
}

}  // namespace oddsrelay::relay
