#include "rest/widget_views.h"

#include <algorithm>
#include <vector>

#include "protocol/sports.h"

namespace oddsrelay::rest {

namespace {

void write_score_fields(json::Writer& w, const EventEntry& e) {
  const ScoreState* sc = e.score.get();
  w.Key("status");
  w.String(sc ? feed::status_name(sc->last.status) : (e.live() ? "live" : "scheduled"));
  w.Key("score");
  if (sc && sc->last.home && sc->last.away)
    json::home_away(w, *sc->last.home, *sc->last.away);
  else
    w.Null();
  w.Key("clock");
  if (sc && sc->last.clock)
    json::str(w, *sc->last.clock);
  else
    w.Null();
  w.Key("period");
  if (sc && sc->last.period)
    json::str(w, *sc->last.period);
  else
    w.Null();
}

void write_teams(json::Writer& w, const EventEntry& e) {
  w.Key("event_id");
  json::str(w, e.key);
  w.Key("sport");
  w.Int(e.sport());
  w.Key("sport_name");
  const char* n = sport_name(e.sport());
  w.String(n ? n : "Other");
  w.Key("home");
  json::str(w, e.info->h);
  w.Key("away");
  json::str(w, e.info->a);
}

}  // namespace

void write_widget_events(json::Writer& w, const Snapshot& s) {
  std::vector<const EventEntry*> live;
  s.events.for_each([&](const EventEntry& e) {
    if (e.listed() && e.live()) live.push_back(&e);
  });
  std::sort(live.begin(), live.end(),
            [](auto* a, auto* b) { return std::pair(a->sport(), a->number) < std::pair(b->sport(), b->number); });
  w.StartArray();
  for (const EventEntry* e : live) {
    w.StartObject();
    write_teams(w, *e);
    write_score_fields(w, *e);
    w.EndObject();
  }
  w.EndArray();
}

void write_widget_data(json::Writer& w, const EventEntry& e, std::string_view settings) {
  w.StartObject();
  write_teams(w, e);
  write_score_fields(w, e);
  const ScoreState* sc = e.score.get();
  w.Key("match_length");
  if (sc && sc->last.match_length)
    w.Int(*sc->last.match_length);
  else
    w.Null();
  w.Key("kickoff");
  w.Int64(sc && sc->last.kickoff ? *sc->last.kickoff : e.info->ts);
  w.Key("timeline");
  w.StartArray();
  if (sc)
    for (const ScorePoint& p : sc->timeline) {
      w.StartObject();
      w.Key("at");
      w.Int64(p.at);
      w.Key("home");
      w.Int(p.home);
      w.Key("away");
      w.Int(p.away);
      w.Key("clock");
      json::str(w, p.clock);
      w.EndObject();
    }
  w.EndArray();
  w.Key("stats");
  w.StartObject();
  if (e.stats)
    for (size_t i = 0; i < feed::kStatNames.size(); ++i)
      if (const auto& v = e.stats->values[i]) {
        w.Key(feed::kStatNames[i]);
        json::pair(w, *v);
      }
  w.EndObject();
  w.Key("settings");
  w.RawValue(settings.data(), settings.size(), rapidjson::kObjectType);
  w.EndObject();
}

}  // namespace oddsrelay::rest
