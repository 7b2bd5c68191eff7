#include "rest/rdstn.h"

#include <charconv>
#include <cstdio>

#include <rapidjson/document.h>

#include "protocol/event_id.h"
#include "protocol/json_out.h"
#include "protocol/sports.h"
#include "rest/json_views.h"

namespace oddsrelay::rest {

namespace {

enum class Op { Get, Full, All, IfChanged, SportsLive, SportsPre };

bool parse_op(std::string_view s, Op& op) {
  if (s == "g") op = Op::Get;
  else if (s == "gf") op = Op::Full;
  else if (s == "ga") op = Op::All;
  else if (s == "go") op = Op::IfChanged;
  else if (s == "sl") op = Op::SportsLive;
  else if (s == "sp") op = Op::SportsPre;
  else return false;
  return true;
}

bool parse_int(std::string_view s, int64_t& v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

// {"<sportId>": "[id, name, count]"}: the value is a JSON string, as SPEC.md shows.
void write_sports(json::Writer& w, const Snapshot& s, bool live) {
  w.StartObject();
  for (const SportCount& c : s.sports) {
    uint32_t n = live ? c.live : c.prematch;
    if (n == 0) continue;
    const char* name = sport_name(c.sport);
    std::string inner;
    json::StringSink sink(inner);
    json::Writer iw(sink);
    iw.StartArray();
    iw.Int(c.sport);
    iw.String(name ? name : "Other");
    iw.Uint(n);
    iw.EndArray();
    json::key(w, std::to_string(c.sport));
    json::str(w, inner);
  }
  w.EndObject();
}

struct Ctx {
  const Snapshot& snap;
  bool with_odds;
};

void write_event_full(json::Writer& w, const Ctx& c, const EventEntry& e) {
  w.StartObject();
  w.Key("event");
  if (e.listed()) w.RawValue(e.info->json.data(), e.info->json.size(), rapidjson::kObjectType);
  else w.Null();
  if (c.with_odds) {
    w.Key("odds");
    write_odds(w, e, OddsForm::Get);
  }
  w.Key("score");
  if (!write_score(w, e)) w.Null();
  w.EndObject();
}

// The value of one key (null if it names nothing); `since`: for go.
void write_value(json::Writer& w, const Ctx& c, Op op, std::string_view key, int64_t since, int64_t& version) {
  version = c.snap.seq;
  // bm{N}_<rest>: N is a bookmaker index; one book is served, any N reads it.
  std::string_view rest;
  if (key.starts_with("bm")) {
    size_t u = key.find('_');
    int64_t n = 0;
    if (u != std::string_view::npos && parse_int(key.substr(2, u - 2), n) && n >= 0) rest = key.substr(u + 1);
  }
  if (rest == "sl" || rest == "sp") return write_sports(w, c.snap, rest == "sl");
  if (rest.starts_with("el") || rest.starts_with("ep")) {
    int64_t sport = 0;
    if (parse_int(rest.substr(2), sport)) {
      const bool live = rest[1] == 'l';
      auto groups = list_events(c.snap, live, static_cast<int32_t>(sport), std::nullopt);
      std::vector<const EventEntry*> events = groups.empty() ? std::vector<const EventEntry*>{} : groups[0].events;
      int64_t newest = 0;
      for (const EventEntry* e : events) newest = std::max(newest, e->updated_at);
      version = newest;
      if (op == Op::IfChanged && newest <= since) {
        w.Null();
        return;
      }
      if (op == Op::All) {
        w.StartObject();
        for (const EventEntry* e : events) {
          json::key(w, e->key);
          write_event_full(w, c, *e);
        }
        w.EndObject();
      } else {
        write_events(w, events);
      }
      return;
    }
  }
  if (!rest.empty()) {
    ParsedId p = parse_event_id(rest);
    if (const EventEntry* e = p.ok() ? c.snap.events.find(p.number) : nullptr) {
      version = e->updated_at;
      if (op == Op::IfChanged && e->updated_at <= since) {
        w.Null();
        return;
      }
      if (op == Op::Full || op == Op::All) return write_event_full(w, c, *e);
      if (e->listed()) {
        w.RawValue(e->info->json.data(), e->info->json.size(), rapidjson::kObjectType);
        return;
      }
    }
  }
  w.Null();
}

}  // namespace

int answer_rdstn(std::string_view body, const Snapshot& snap, bool with_odds, std::string& out, std::string& error,
                 RdstnLimits limits) {
  rapidjson::Document d;
  d.Parse(body.data(), body.size());
  if (d.HasParseError() || !d.IsArray()) {
    error = "Invalid body: expected a JSON array of [op, args] commands";
    return 400;
  }
  if (d.Size() > limits.max_commands) {
    error = "Too many commands: at most " + std::to_string(limits.max_commands) + " per request";
    return 400;
  }
  // Validate everything before answering anything.
  size_t keys = 0;
  for (const auto& cmd : d.GetArray()) {
    Op op;
    if (!cmd.IsArray() || cmd.Empty() || cmd.Size() > 2 || !cmd[0].IsString() || !parse_op(cmd[0].GetString(), op)) {
      error = "Invalid command: expected [op, args] with op one of ga, gf, g, go, sl, sp";
      return 400;
    }
    const bool lists = op == Op::SportsLive || op == Op::SportsPre;
    if (lists) {
      if (cmd.Size() == 2 && !(cmd[1].IsArray() && cmd[1].Empty()) && !cmd[1].IsNull()) {
        error = "Invalid command: sl and sp take no arguments";
        return 400;
      }
      ++keys;
      continue;
    }
    if (cmd.Size() != 2 || !cmd[1].IsArray()) {
      error = std::string("Invalid command: ") + cmd[0].GetString() + " needs an array of keys";
      return 400;
    }
    for (const auto& k : cmd[1].GetArray())
      if (!k.IsString() || k.GetStringLength() == 0 || k.GetStringLength() > 128) {
        error = "Invalid key: keys are non-empty strings of at most 128 characters";
        return 400;
      }
    keys += cmd[1].Size();
  }
  if (keys > limits.max_keys) {
    error = "Too many keys: at most " + std::to_string(limits.max_keys) + " per request";
    return 400;
  }
  Ctx c{snap, with_odds};
  json::StringSink sink(out);
  json::Writer w(sink);
  w.StartArray();
  for (const auto& cmd : d.GetArray()) {
    Op op;
    parse_op(cmd[0].GetString(), op);
    if (op == Op::SportsLive || op == Op::SportsPre) {
      w.StartObject();
      w.Key(op == Op::SportsLive ? "sl" : "sp");
      write_sports(w, snap, op == Op::SportsLive);
      w.EndObject();
      continue;
    }
    for (const auto& k : cmd[1].GetArray()) {
      std::string_view key(k.GetString(), k.GetStringLength()), name = key;
      int64_t since = 0, version = 0;
      if (op == Op::IfChanged) {  // "key@version": the value only if newer
        size_t at = key.rfind('@');
        if (at != std::string_view::npos && parse_int(key.substr(at + 1), since)) name = key.substr(0, at);
      }
      w.StartObject();
      json::key(w, key);
      write_value(w, c, op, name, since, version);
      if (op == Op::IfChanged) {
        w.Key("v");
        w.Int64(version);
      }
      w.EndObject();
    }
  }
  w.EndArray();
  return 200;
}

}  // namespace oddsrelay::rest
