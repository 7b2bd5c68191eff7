#include "protocol/event_json.h"

namespace oddsrelay::feed {

void write_event_object(json::Writer& w, const EventObject& e) {
  w.StartObject();
  if (e.c) {
    w.Key("c");
    w.StartArray();
    w.Int64(e.c->id);
    json::str(w, e.c->name);
    w.Int64(e.c->source_sport);
    json::str(w, e.c->iso2);
    w.EndArray();
  }
  if (e.t) {
    w.Key("t");
    w.StartArray();
    w.Int64(e.t->id);
    json::str(w, e.t->name);
    w.Int64(e.t->priority);
    w.EndArray();
  }
  w.Key("g");
  w.Int64(e.g);
  w.Key("ts");
  w.Int64(e.ts);
  w.Key("h");
  json::str(w, e.h);
  w.Key("a");
  json::str(w, e.a);
  w.Key("co");
  w.Int64(e.co);
  w.Key("map");
  w.StartObject();
  for (const auto& m : e.map) {
    json::key(w, m.key);
    w.StartObject();
    w.Key("p");
    w.Int64(m.p);
    w.EndObject();
  }
  w.EndObject();
  w.Key("s");
  w.Int64(e.s);
  if (e.ms) {
    w.Key("ms");
    w.Int64(*e.ms);
  }
  w.Key("live");
  w.Bool(e.live);
  w.Key("sport");
  w.Int(e.sport);
  w.EndObject();
}

void finalize_event_json(EventObject& e) {
  e.json.clear();
  json::StringSink sink(e.json);
  json::Writer w(sink);
  write_event_object(w, e);
}

}  // namespace oddsrelay::feed
