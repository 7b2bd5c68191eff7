#include "engine/views/json_views.h"

#include <algorithm>
#include <map>
#include <string>

#include "protocol/json_chunk.h"

namespace oddsrelay::views {

std::vector<EventGroup> list_events(const Snapshot& s, bool live, std::optional<int32_t> sport,
                                    std::optional<uint32_t> limit) {
  std::map<int32_t, std::vector<const EventEntry*>> by_sport;
  s.events.for_each([&](const EventEntry& e) {
    if (!e.listed() || e.live() != live || (sport && e.sport() != *sport)) return;
    by_sport[e.sport()].push_back(&e);
  });
  std::vector<EventGroup> out;
  for (auto& [sp, v] : by_sport) {
    auto key = [](const EventEntry* e) {
      int64_t prio = e->info->t ? e->info->t->priority : INT64_MAX;
      return std::tuple(prio, e->info->ts, e->number);
    };
    std::sort(v.begin(), v.end(), [&](auto* a, auto* b) { return key(a) < key(b); });
    if (limit && v.size() > *limit) v.resize(*limit);
    out.push_back({sp, std::move(v)});
  }
  return out;
}

void write_events(json::Writer& w, const std::vector<const EventEntry*>& events) {
  w.StartObject();
  for (const EventEntry* e : events) {
    json::key(w, e->key);
    w.raw(e->info->json, rapidjson::kObjectType);
  }
  w.EndObject();
}

namespace {

using json::Chunk;
using json::kMaxKeyJson;
using json::put_int;
using json::put_lit;
using json::put_str;

// The most one outcome's ,"<id>":[<price>,<flags>,<special>,<prev>,<ts>]
// takes, and a line's ,"<key>":{ or ,"s":<s>,"ls":<ls>}.
constexpr size_t kMaxOutcome = 1 + json::kMaxIdKey + 1 + 11 + 1 + 10 + 1 + kMaxKeyJson + 1 + 11 + 1 + 20 + 1;
constexpr size_t kMaxLinePart = 1 + kMaxKeyJson + 2 + 5 + 3 + 1 + 5 + 20 + 1;

}  // namespace

// Byte for byte what RapidJSON's writer made of the market when it wrote
// it value by value (tests/engine/json_views_test.cc holds the two
// together), formatted here on the stack: this is most of what the relay
// encodes per batch.
void append_market(std::string& out, const Market& m, OddsForm form) {
  Chunk c(out);
  char special[kMaxKeyJson];  // the line's special as JSON: null or the string
  char* p = c.room(1);
  *p++ = '{';
  c.done(p);
  for (const Line& l : m.lines) {
    p = c.room(kMaxLinePart);
    if (&l != m.lines.data()) *p++ = ',';
    p = put_str(p, l.key.view());
    *p++ = ':';
    *p++ = '{';
    c.done(p);
    const std::string_view sp = l.key.special();
    const size_t splen = static_cast<size_t>((sp.empty() ? put_lit(special, "null") : put_str(special, sp)) - special);
    for (uint32_t i = l.first; i < l.first + l.count; ++i) {
      const Outcome& o = m.outcomes[i];
      p = c.room(kMaxOutcome);
      if (i != l.first) *p++ = ',';
      p = json::put_id_key(p, o.id);
      *p++ = '[';
      p = put_int(p, o.price);
      *p++ = ',';
      p = put_int(p, o.flags);
      *p++ = ',';
      p = std::copy(special, special + splen, p);
      *p++ = ',';
      if (form == OddsForm::Post) {
        p = put_int(p, o.prev_price);
        *p++ = ',';
      }
      p = put_int(p, o.ts);
      *p++ = ']';
      c.done(p);
    }
    p = c.room(kMaxLinePart);
    if (l.count > 0) {
      p = put_lit(p, ",\"s\":");
      p = put_int(p, static_cast<unsigned>(l.suspended));
      *p++ = ',';
    }
    p = put_lit(p, "\"ls\":");
    p = put_int(p, l.ls);
    *p++ = '}';
    c.done(p);
  }
  p = c.room(1);
  *p++ = '}';
  c.done(p);
}

void write_market(json::Writer& w, const Market& m, OddsForm form) {
  w.raw(rapidjson::kObjectType, [&](std::string& out) { append_market(out, m, form); });
}

void write_odds(json::Writer& w, const EventEntry& e, OddsForm form, std::optional<uint32_t> only_market) {
  w.StartObject();
  for (const auto& ref : e.markets) {
    if (only_market && ref.id != *only_market) continue;
    json::id_key(w, ref.id);
    write_market(w, *ref, form);
  }
  w.EndObject();
}

bool write_score(json::Writer& w, const EventEntry& e) {
  if (!e.score) return false;
  const ScoreState& s = *e.score;
  w.StartObject();
  w.Key("home");
  w.Int(s.last.home.value_or(0));
  w.Key("away");
  w.Int(s.last.away.value_or(0));
  w.Key("status");
  w.String(feed::status_name(s.last.status));
  w.Key("ts");
  w.Int64(s.ts);
  w.Key("kickoff");
  w.Int64(s.last.kickoff ? *s.last.kickoff : (e.info ? e.info->ts : 0));
  if (s.last.clock) {
    w.Key("clock");
    json::str(w, *s.last.clock);
    int minutes = 0;
    bool digits = false;
    for (char c : *s.last.clock) {
      if (c < '0' || c > '9') break;
      minutes = minutes * 10 + (c - '0');
      digits = true;
    }
    if (digits) {
      w.Key("ms");
      w.Int(minutes);
    }
  }
  if (s.last.period) {
    w.Key("period");
    json::str(w, *s.last.period);
  }
  if (s.last.match_length) {
    w.Key("match_length");
    w.Int(*s.last.match_length);
  }
  w.EndObject();
  return true;
}

}  // namespace oddsrelay::views
