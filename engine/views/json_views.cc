#include "engine/views/json_views.h"

#include <algorithm>
#include <map>

namespace oddsrelay::rest {

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
    w.RawValue(e->info->json.data(), e->info->json.size(), rapidjson::kObjectType);
  }
  w.EndObject();
}

void write_market(json::Writer& w, const Market& m, OddsForm form) {
  w.StartObject();
  for (const Line& l : m.lines) {
    json::key(w, l.key.view());
    w.StartObject();
    for (uint32_t i = l.first; i < l.first + l.count; ++i) {
      const Outcome& o = m.outcomes[i];
      json::id_key(w, o.id);
      w.StartArray();
      w.Int(o.price);
      w.Uint(o.flags);
      if (l.key.special().empty())
        w.Null();
      else
        json::str(w, l.key.special());
      if (form == OddsForm::Post) w.Int(o.prev_price);
      w.Int64(o.ts);
      w.EndArray();
    }
    if (l.count > 0) {
      w.Key("s");
      w.Uint(l.suspended);
    }
    w.Key("ls");
    w.Int64(l.ls);
    w.EndObject();
  }
  w.EndObject();
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

}  // namespace oddsrelay::rest
