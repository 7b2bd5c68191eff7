#include "relay/frame_encoder.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

#include "engine/core/odds_digest.h"
#include "engine/views/json_views.h"
#include "protocol/event_id.h"
#include "protocol/json_chunk.h"
#include "protocol/json_out.h"
#include "protocol/relay_frame.h"
#include "protocol/ws_deflate.h"

namespace oddsrelay::relay {

namespace {

// Records where each entry of the object being written lies: open() at
// its brace, then entry(id) after each key and value.
class PartLog {
 public:
  PartLog(std::vector<Part>* parts, const std::string& p) : parts_(parts), p_(p) {}
  void open() {
    if (parts_) brace_ = p_.size(), last_ = p_.size() + 1;
  }
  void entry(uint64_t id) {
    if (!parts_) return;
    const size_t start = parts_->empty() ? last_ : last_ + 1;  // the writer puts a comma before the key
    parts_->push_back(Part{id, static_cast<uint32_t>(start - brace_), static_cast<uint32_t>(p_.size() - start)});
    last_ = p_.size();
  }

 private:
  std::vector<Part>* parts_;
  const std::string& p_;
  size_t brace_ = 0, last_ = 0;
};

// {<event id>: <event object> | null, ...} appended to `p`: the events'
// stored JSON copied whole, no writer needed.
void append_event_map(std::string& p, std::span<const EventItem> events, PartLog* log = nullptr) {
  if (log) log->open();
  p += '{';
  for (const EventItem& it : events) {
    if (&it != events.data()) p += ',';
    json::append_str(p, it.key);
    p += ':';
    if (it.entry && it.entry->listed())
      p.append(it.entry->info->json);
    else
      p.append("null");
    if (log) log->entry(it.entry ? it.entry->number : it.number ? it.number : parse_event_id(it.key).number);
  }
  p += '}';
}

void write_event_map(json::Writer& w, std::span<const EventItem> events) {
  w.raw(rapidjson::kObjectType, [&](std::string& p) { append_event_map(p, events); });
}

void write_resume_note(json::Writer& w, ResumeNote note) {
  if (!note.asked) return;
  w.Key("resumed");
  w.Bool(note.resumed);
  if (note.resumed) return;
  w.Key("reason");
  json::str(w, note.reason);
}

// "<type>\x1F<channel>\x1F" in front of the JSON body.
void begin_pt(std::string& p, std::string_view type, std::string_view channel) {
  p.append(type);
  p += kSep;
  p.append(channel);
  p += kSep;
}

}  // namespace

FrameRef pt_ready(const Snapshot& s, std::span<const int32_t> sports, uint32_t channels, ResumeNote note,
                  SnapshotNote snapshot) {
  FrameBuilder b;
  begin_pt(b.payload(), "INFO", "PUB");
  json::StringSink sink(b.payload());
  json::Writer w(sink);
  w.StartObject();
  w.Key("ready");
  w.Bool(true);
  w.Key("protocol");
  w.String("v2");
  w.Key("epoch");
  json::str(w, s.epoch);
  w.Key("seq");
  w.Uint64(s.seq);
  write_resume_note(w, note);
  w.Key("at");
  w.Int64(s.clock);
  w.Key("sports");
  w.StartArray();
  for (int32_t sp : sports) w.Int(sp);
  w.EndArray();
  w.Key("channels");
  w.StartArray();
  if (channels & 1) w.String("evt");
  if (channels & 2) w.String("odds");
  w.EndArray();
  if (snapshot.frames) {
    w.Key("frames");
    w.Uint64(*snapshot.frames);
  }
  if (snapshot.digest) {
    w.Key("digest");
    json::str(w, digest_hex(*snapshot.digest));
  }
  w.EndObject();
  return b.finish();
}

FrameRef pt_marker(uint64_t seq, uint64_t from, int64_t at, uint64_t conflated, Stamps stamps,
                   std::optional<uint64_t> digest) {
  FrameBuilder b;
  std::string& p = b.payload();
  begin_pt(p, "INFO", "PUB");
  char buf[128];
  int n =
      std::snprintf(buf, sizeof buf, "{\"seq\":%llu,\"from\":%llu,\"at\":%lld", static_cast<unsigned long long>(seq),
                    static_cast<unsigned long long>(from), static_cast<long long>(at));
  p.append(buf, static_cast<size_t>(n));
  if (conflated) {
    n = std::snprintf(buf, sizeof buf, ",\"conflated\":%llu", static_cast<unsigned long long>(conflated));
    p.append(buf, static_cast<size_t>(n));
  }
  if (stamps.arrived_us) {
    n = std::snprintf(buf, sizeof buf, ",\"arrived_us\":%lld", static_cast<long long>(stamps.arrived_us));
    p.append(buf, static_cast<size_t>(n));
  }
  if (stamps.applied_us) {
    n = std::snprintf(buf, sizeof buf, ",\"applied_us\":%lld,\"encoded_us\":%lld",
                      static_cast<long long>(stamps.applied_us), static_cast<long long>(stamps.encoded_us));
    p.append(buf, static_cast<size_t>(n));
  }
  if (digest) {
    p += ",\"digest\":\"";
    p += digest_hex(*digest);
    p += '"';
  }
  p += '}';
  return b.finish();
}

FrameRef pt_events(int32_t sport, std::span<const EventItem> events, std::vector<Part>* parts) {
  FrameBuilder b;
  std::string& p = b.payload();
  begin_pt(p, "P", "evt:" + std::to_string(sport));
  PartLog log(parts, p);
  append_event_map(p, events, &log);
  return b.finish();
}

FrameRef pt_odds(const EventEntry& e, int32_t sport, std::span<const uint32_t> markets, std::vector<Part>* parts) {
  FrameBuilder b;
  std::string& p = b.payload();
  begin_pt(p, "P", "odds:" + std::to_string(sport) + ":" + std::to_string(e.number));
  PartLog log(parts, p);
  log.open();
  p += '{';
  bool first = true;
  auto entry = [&](uint32_t id, const Market* m) {
    char key[json::kMaxIdKey + 1], *k = key;
    if (!std::exchange(first, false)) *k++ = ',';
    p.append(key, static_cast<size_t>(json::put_id_key(k, id) - key));
    if (m)
      views::append_market(p, *m, views::OddsForm::Get);
    else
      p.append("null");
    log.entry(id);
  };
  if (markets.empty()) {  // every market, as /v1/odds writes them
    for (const auto& ref : e.markets) entry(ref.id, &*ref);
  } else {
    for (uint32_t id : markets) entry(id, e.market(id));
  }
  p += '}';
  return b.finish();
}

FrameRef pt_cut(const FrameRef& from, std::span<const Part> keep, std::vector<Part>* parts) {
  const std::string_view whole = ws::frame_payload(from->bytes());
  const size_t brace = whole.find(kSep, whole.find(kSep) + 1) + 1;
  const std::string_view body = whole.substr(brace);
  FrameBuilder b;
  std::string& p = b.payload();
  p.append(whole.substr(0, brace));
  p += '{';
  for (const Part& k : keep) {
    if (p.back() != '{') p += ',';
    if (parts) parts->push_back(Part{k.id, static_cast<uint32_t>(p.size() - FrameBuilder::kRoom - brace), k.len});
    p.append(body.substr(k.off, k.len));
  }
  p += '}';
  return b.finish();
}

// The fields a /ws state message opens with: its type and the state's
// clock, position and log.
static void write_ws_head(json::Writer& w, const char* type, const Snapshot& s) {
  w.Key("type");
  w.String(type);
  w.Key("ts");
  w.Int64(s.clock);
  w.Key("seq");
  w.Uint64(s.seq);
  w.Key("epoch");
  json::str(w, s.epoch);
}

FrameRef ws_snapshot(const Snapshot& s, bool prematch, ResumeNote note) {
  std::vector<EventItem> live, pre;
  s.events.for_each([&](const EventEntry& e) {
    if (e.listed() && (e.live() || prematch)) (e.live() ? live : pre).push_back(EventItem{e.key, &e});
  });
  auto by_number = [](const EventItem& a, const EventItem& b) { return a.entry->number < b.entry->number; };
  std::sort(live.begin(), live.end(), by_number);
  std::sort(pre.begin(), pre.end(), by_number);
  FrameBuilder b;
  json::StringSink sink(b.payload());
  json::Writer w(sink);
  w.StartObject();
  write_ws_head(w, "snapshot", s);
  write_resume_note(w, note);
  w.Key("live");
  write_event_map(w, live);
  w.Key("prematch");
  write_event_map(w, pre);
  w.EndObject();
  return b.finish();
}

FrameRef ws_resumed(const Snapshot& s, size_t changed) {
  FrameBuilder b;
  json::StringSink sink(b.payload());
  json::Writer w(sink);
  w.StartObject();
  write_ws_head(w, "resumed", s);
  w.Key("resumed");
  w.Bool(true);
  w.Key("changed");
  w.Uint64(changed);
  w.EndObject();
  return b.finish();
}

FrameRef ws_live_update(int64_t ts, uint64_t seq, std::span<const EventItem> events) {
  FrameBuilder b;
  json::StringSink sink(b.payload());
  json::Writer w(sink);
  w.StartObject();
  w.Key("type");
  w.String("live_update");
  w.Key("ts");
  w.Int64(ts);
  w.Key("seq");
  w.Uint64(seq);
  w.Key("data");
  write_event_map(w, events);
  w.EndObject();
  return b.finish();
}

namespace {

FrameRef market_message(std::string_view event_key, uint32_t market, const Market* m, int64_t ts, uint64_t seq) {
  FrameBuilder b;
  json::StringSink sink(b.payload());
  json::Writer w(sink);
  w.StartObject();
  w.Key("type");
  w.String("market");
  w.Key("event_id");
  json::str(w, event_key);
  w.Key("market");
  json::str(w, std::to_string(market));
  w.Key("ts");
  w.Int64(ts);
  w.Key("seq");
  w.Uint64(seq);
  w.Key("outcomes");
  if (m)
    views::write_market(w, *m, views::OddsForm::Get);
  else
    w.Null();
  w.EndObject();
  return b.finish();
}

}  // namespace

FrameRef ws_market(const EventEntry& e, uint32_t market, int64_t ts, uint64_t seq) {
  return market_message(e.key, market, e.market(market), ts, seq);
}

FrameRef ws_market_removed(std::string_view event_key, uint32_t market, int64_t ts, uint64_t seq) {
  return market_message(event_key, market, nullptr, ts, seq);
}

FrameRef ws_subscribed(std::string_view event_key, std::span<const uint32_t> markets, uint64_t seq) {
  FrameBuilder b;
  json::StringSink sink(b.payload());
  json::Writer w(sink);
  w.StartObject();
  w.Key("type");
  w.String("subscribed");
  w.Key("event_id");
  json::str(w, event_key);
  w.Key("markets");
  w.StartArray();
  for (uint32_t m : markets) json::str(w, std::to_string(m));
  w.EndArray();
  w.Key("seq");
  w.Uint64(seq);
  w.EndObject();
  return b.finish();
}

FrameRef ws_error(std::string_view msg, uint64_t seq) {
  FrameBuilder b;
  std::string& p = b.payload();
  // Escaped: a refusal may quote what the client sent (a duplicate key).
  p += "{\"error\":";
  json::append_str(p, msg);
  p += ",\"seq\":";
  p += std::to_string(seq);
  p += '}';
  return b.finish();
}

FrameRef text_frame(std::string_view payload) { return control_frame(ws::kText, payload); }

FrameRef control_frame(ws::Opcode op, std::string_view payload) {
  FrameBuilder b;
  b.payload().append(payload);
  return b.finish(op);
}

FrameRef close_frame(uint16_t code, std::string_view reason) {
  std::string whole;
  ws::append_close(whole, code, reason);
  return raw_bytes(whole);
}

FrameRef raw_bytes(std::string_view bytes) {
  FrameBuilder b;
  b.payload().append(bytes);
  return b.finish_raw();
}

FrameRef upgrade_response(std::string_view accept, bool deflate) {
  std::string r =
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ";
  r.append(accept).append("\r\n");
  if (deflate) r.append("Sec-WebSocket-Extensions: ").append(ws::kDeflateResponse).append("\r\n");
  return raw_bytes(r.append("\r\n"));
}

}  // namespace oddsrelay::relay
