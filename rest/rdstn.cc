#include "rest/rdstn.h"

#include <charconv>
#include <climits>
#include <cstdio>

#include "engine/views/json_views.h"
#include "protocol/event_id.h"
#include "protocol/json_out.h"
#include "protocol/sports.h"

namespace oddsrelay::rest {

namespace {

bool parse_int(std::string_view s, int64_t& v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

// {"<sportId>": "[id, name, count]"}: the value is a JSON string (docs/api.md).
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

// What a key names. The answer and the permission check both read it, so
// what is declared is what is written.
struct Target {
  enum class Kind { None, SportList, EventList, Event } kind = Kind::None;
  bool live = false;  // sl / el (else sp / ep)
  int32_t sport = 0;
  const EventEntry* event = nullptr;
};

Target resolve(std::string_view key, const Snapshot& snap) {
  Target t;
  // bm{N}_<rest>: N is a bookmaker index; one book is served, any N reads it.
  std::string_view rest;
  if (key.starts_with("bm")) {
    size_t u = key.find('_');
    int64_t n = 0;
    if (u != std::string_view::npos && parse_int(key.substr(2, u - 2), n) && n >= 0) rest = key.substr(u + 1);
  }
  if (rest == "sl" || rest == "sp") {
    t.kind = Target::Kind::SportList;
    t.live = rest == "sl";
    return t;
  }
  if (rest.starts_with("el") || rest.starts_with("ep")) {
    int64_t sport = 0;
    // A sport outside the table names nothing: null, as an unknown event.
    if (parse_int(rest.substr(2), sport) && sport > 0 && sport <= INT32_MAX &&
        sport_name(static_cast<int32_t>(sport))) {
      t.kind = Target::Kind::EventList;
      t.live = rest[1] == 'l';
      t.sport = static_cast<int32_t>(sport);
      return t;
    }
  }
  if (!rest.empty()) {
    ParsedId p = parse_event_id(rest);
    if ((t.event = p.ok() ? snap.events.find(p.number) : nullptr)) t.kind = Target::Kind::Event;
  }
  return t;
}

// The key's name without go's "@version" suffix, and that version.
std::string_view key_name(RdstnOp op, std::string_view key, int64_t& since) {
  since = 0;
  if (op == RdstnOp::IfChanged) {
    size_t at = key.rfind('@');
    if (at != std::string_view::npos && parse_int(key.substr(at + 1), since)) return key.substr(0, at);
  }
  return key;
}

// {"event", "odds", "score"}: needs the event's own permission, odds and scores.
void write_event_full(json::Writer& w, const EventEntry& e) {
  w.StartObject();
  w.Key("event");
  if (e.listed())
    w.RawValue(e.info->json.data(), e.info->json.size(), rapidjson::kObjectType);
  else
    w.Null();
  w.Key("odds");
  write_odds(w, e, OddsForm::Get);
  w.Key("score");
  if (!write_score(w, e)) w.Null();
  w.EndObject();
}

// The data one key's answer carries (protocol/api/access.h), by the shape of the
// answer, not by what the lists hold right now.
void key_needs(RdstnOp op, const Target& t, Needs& n) {
  const bool full = op == RdstnOp::Full || op == RdstnOp::All;
  switch (t.kind) {
    case Target::Kind::None:
    case Target::Kind::SportList:
      return;  // null, or counts as /v1/sports
    case Target::Kind::EventList:
      n.add(event_data(t.live));
      if (op == RdstnOp::All) n.add(Data::Price).add(Data::Score);
      return;
    case Target::Kind::Event:
      if (t.event->listed()) n.add(event_data(t.event->live()));
      if (full) n.add(Data::Price).add(Data::Score);
      return;
  }
}

// The value of one key (null if it names nothing); `since`: for go.
void write_value(json::Writer& w, const Snapshot& snap, RdstnOp op, const Target& t, int64_t since, int64_t& version) {
  version = snap.seq;
  switch (t.kind) {
    case Target::Kind::SportList:
      return write_sports(w, snap, t.live);
    case Target::Kind::EventList: {
      auto groups = list_events(snap, t.live, t.sport, std::nullopt);
      std::vector<const EventEntry*> events = groups.empty() ? std::vector<const EventEntry*>{} : groups[0].events;
      int64_t newest = 0;
      for (const EventEntry* e : events) newest = std::max(newest, e->updated_at);
      version = newest;
      if (op == RdstnOp::IfChanged && newest <= since) {
        w.Null();
        return;
      }
      if (op == RdstnOp::All) {
        w.StartObject();
        for (const EventEntry* e : events) {
          json::key(w, e->key);
          write_event_full(w, *e);
        }
        w.EndObject();
      } else {
        write_events(w, events);
      }
      return;
    }
    case Target::Kind::Event: {
      const EventEntry& e = *t.event;
      version = e.updated_at;
      if (op == RdstnOp::IfChanged && e.updated_at <= since)
        w.Null();
      else if (op == RdstnOp::Full || op == RdstnOp::All)
        write_event_full(w, e);
      else if (e.listed())
        w.RawValue(e.info->json.data(), e.info->json.size(), rapidjson::kObjectType);
      else
        w.Null();
      return;
    }
    case Target::Kind::None:
      w.Null();
      return;
  }
}

}  // namespace

void rdstn_needs(const RdstnRequest& req, const Snapshot& snap, Needs& needs) {
  for (const auto& cmd : req.doc.GetArray()) {
    RdstnOp op;
    parse_op(cmd[0].GetString(), op);
    if (op == RdstnOp::SportsLive || op == RdstnOp::SportsPre) continue;  // counts, as /v1/sports
    for (const auto& k : cmd[1].GetArray()) {
      int64_t since;
      key_needs(op, resolve(key_name(op, std::string_view(k.GetString(), k.GetStringLength()), since), snap), needs);
    }
  }
}

bool write_rdstn(const RdstnRequest& req, const Snapshot& snap, std::string& out, size_t max_answer) {
  const size_t start = out.size();
  json::StringSink sink(out);
  json::Writer w(sink);
  w.StartArray();
  for (const auto& cmd : req.doc.GetArray()) {
    RdstnOp op;
    parse_op(cmd[0].GetString(), op);
    if (op == RdstnOp::SportsLive || op == RdstnOp::SportsPre) {
      w.StartObject();
      w.Key(op == RdstnOp::SportsLive ? "sl" : "sp");
      write_sports(w, snap, op == RdstnOp::SportsLive);
      w.EndObject();
      continue;
    }
    for (const auto& k : cmd[1].GetArray()) {
      std::string_view key(k.GetString(), k.GetStringLength());
      int64_t since = 0, version = 0;
      const std::string_view name = key_name(op, key, since);
      w.StartObject();
      json::key(w, key);
      write_value(w, snap, op, resolve(name, snap), since, version);
      if (op == RdstnOp::IfChanged) {
        w.Key("v");
        w.Int64(version);
      }
      w.EndObject();
      if (out.size() - start > max_answer) {
        out.resize(start);
        return false;
      }
    }
  }
  w.EndArray();
  return true;
}

}  // namespace oddsrelay::rest
