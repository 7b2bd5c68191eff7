// The JSON writer every encoder here shares: RapidJSON's SAX Writer over a
// caller-owned std::string, so encoders append into a buffer the caller keeps
// and reuses (no per-message allocation once it has grown).
#pragma once

#include <rapidjson/writer.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

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

using Writer = rapidjson::Writer<StringSink>;

inline void key(Writer& w, std::string_view k) { w.Key(k.data(), static_cast<rapidjson::SizeType>(k.size())); }
// A numeric id as an object key ("1001"), without a temporary string.
inline void id_key(Writer& w, uint32_t id) {
  char buf[16];
  char* end = std::to_chars(buf, buf + sizeof buf, id).ptr;  // not snprintf: this is per outcome in the journal
  w.Key(buf, static_cast<rapidjson::SizeType>(end - buf));
}
inline void str(Writer& w, std::string_view s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }

}  // namespace oddsrelay::json
