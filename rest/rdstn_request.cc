// rest/rdstn_request.h: the POST /rdstn body parser.
#include "rest/rdstn_request.h"

#include "protocol/api/errors.h"
#include "protocol/json_in.h"
#include "rest/vocabulary.h"

namespace oddsrelay::rest {

bool parse_op(std::string_view s, RdstnOp& op) {
  if (s == "g")
    op = RdstnOp::Get;
  else if (s == "gf")
    op = RdstnOp::Full;
  else if (s == "ga")
    op = RdstnOp::All;
  else if (s == "go")
    op = RdstnOp::IfChanged;
  else if (s == "sl")
    op = RdstnOp::SportsLive;
  else if (s == "sp")
    op = RdstnOp::SportsPre;
  else
    return false;
  return true;
}

bool parse_rdstn(std::string_view body, RdstnRequest& req, std::string& error, RdstnLimits limits) {
  rapidjson::Document& d = req.doc;
  const json::InResult parsed = json::parse(body, d);
  if (parsed.over_limit()) {
    error = err::bad_body(parsed.message(json::kRequestLimits));
    return false;
  }
  if (!parsed || !d.IsArray()) {
    error = "Invalid body: expected a JSON array of [op, args] commands";
    return false;
  }
  if (d.Size() > limits.max_commands) {
    error = "Too many commands: at most " + std::to_string(limits.max_commands) + " per request";
    return false;
  }
  // Validate everything before answering anything.
  size_t keys = 0;
  for (const auto& cmd : d.GetArray()) {
    RdstnOp op;
    if (!cmd.IsArray() || cmd.Empty() || cmd.Size() > 2 || !cmd[0].IsString() || !parse_op(cmd[0].GetString(), op)) {
      error = "Invalid command: expected [op, args] with op one of ga, gf, g, go, sl, sp";
      return false;
    }
    const bool lists = op == RdstnOp::SportsLive || op == RdstnOp::SportsPre;
    if (lists) {
      if (cmd.Size() == 2 && !(cmd[1].IsArray() && cmd[1].Empty()) && !cmd[1].IsNull()) {
        error = "Invalid command: sl and sp take no arguments";
        return false;
      }
      ++keys;
      continue;
    }
    if (cmd.Size() != 2 || !cmd[1].IsArray()) {
      error = std::string("Invalid command: ") + cmd[0].GetString() + " needs an array of keys";
      return false;
    }
    for (const auto& k : cmd[1].GetArray())
      if (!k.IsString() || k.GetStringLength() == 0 || k.GetStringLength() > 128) {
        error = "Invalid key: keys are non-empty strings of at most 128 characters";
        return false;
      }
    keys += cmd[1].Size();
  }
  if (keys > limits.max_keys) {
    error = "Too many keys: at most " + std::to_string(limits.max_keys) + " per request";
    return false;
  }
  return true;
}

}  // namespace oddsrelay::rest
