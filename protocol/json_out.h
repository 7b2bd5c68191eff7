// The JSON writer every encoder here shares: RapidJSON's SAX Writer over a
// caller-owned std::string, so encoders append into a buffer the caller keeps
// and reuses (no per-message allocation once it has grown). Also
// append_str, the writer's string bytes for encoders that append their own
// (json_chunk.h holds the rest of those pieces).
#pragma once

#include <rapidjson/writer.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>

namespace oddsrelay::json {

// RapidJSON output stream appending to a std::string.
class StringSink {
 public:
  using Ch = char;
  explicit StringSink(std::string& out) : out_(out) {}
  void Put(char c) { out_.push_back(c); }
  void Flush() {}
  std::string& str() { return out_; }

 private:
  std::string& out_;
};

// RapidJSON's writer, which can also take a value the caller appends to the
// buffer itself: whole (an event's stored JSON; RapidJSON's RawValue would
// copy it a byte at a time) or written by a hand-made encoder of a hot
// shape (views::write_market). The writer still puts the separator before
// it and counts it, so what follows is punctuated as usual.
class Writer : public rapidjson::Writer<StringSink> {
 public:
  using rapidjson::Writer<StringSink>::Writer;
  // `append(std::string&)` appends one JSON value of type `t`.
  template <class F>
  void raw(rapidjson::Type t, F&& append) {
    Prefix(t);
    append(os_->str());
    EndValue(true);
  }
  void raw(std::string_view json, rapidjson::Type t) {
    raw(t, [&](std::string& out) { out.append(json); });
  }
};

// Whether RapidJSON's writer (no flags, UTF-8 in and out) would escape
// anything in `s`: control characters, '"' and '\\'; other bytes, UTF-8
// included, go out as they are.
inline bool needs_escape(std::string_view s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == '"' || c == '\\') return true;
  return false;
}
// Appends `s` as a JSON string, byte for byte as Writer::String would: as
// it is between quotes when nothing needs escaping (ids and line keys),
// else escaped by RapidJSON.
inline void append_str(std::string& out, std::string_view s) {
  if (!needs_escape(s)) {
    out += '"';
    out.append(s);
    out += '"';
    return;
  }
  StringSink sink(out);
  Writer w(sink);
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

inline void key(Writer& w, std::string_view k) { w.Key(k.data(), static_cast<rapidjson::SizeType>(k.size())); }
// A numeric id as an object key ("1001"), without a temporary string.
inline void id_key(Writer& w, uint32_t id) {
  char buf[16];
  char* end = std::to_chars(buf, buf + sizeof buf, id).ptr;  // not snprintf: this is per outcome in the journal
  w.Key(buf, static_cast<rapidjson::SizeType>(end - buf));
}
inline void str(Writer& w, std::string_view s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }
// [first, second]: a score, or a statistic's home and away values.
inline void pair(Writer& w, int32_t first, int32_t second) {
  w.StartArray();
  w.Int(first);
  w.Int(second);
  w.EndArray();
}
inline void pair(Writer& w, const std::pair<int32_t, int32_t>& p) { pair(w, p.first, p.second); }
// {"home": h, "away": a}: a score as the widget, settlement and webhook
// answers show it.
inline void home_away(Writer& w, int32_t home, int32_t away) {
  w.StartObject();
  w.Key("home");
  w.Int(home);
  w.Key("away");
  w.Int(away);
  w.EndObject();
}

// Appends one JSON object to `out`; `members` writes what stands between its
// braces. The setup every encoder of a whole object shares.
template <class F>
void append_object(std::string& out, F&& members) {
  StringSink sink(out);
  Writer w(sink);
  w.StartObject();
  members(w);
  w.EndObject();
}
// The same object as a string of its own.
template <class F>
std::string object(F&& members) {
  std::string out;
  append_object(out, members);
  return out;
}

}  // namespace oddsrelay::json
