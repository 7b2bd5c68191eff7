// The client's JSON output (json_text.h).
#include "clients/cpp/json_text.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "protocol/digest_terms.h"

namespace oddsrelay::client {

namespace {

void append_u(std::string& out, unsigned cp) {
  char b[8];
  std::snprintf(b, sizeof b, "\\u%04x", cp);
  out += b;
}

// Python's repr of a float: the shortest text that reads back the same.
void append_double(std::string& out, double d) {
  char b[32];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(b, sizeof b, "%.*g", prec, d);
    if (std::strtod(b, nullptr) == d) break;
  }
  std::string_view t(b);
  out += t;
  if (t.find_first_of(".eEn") == std::string_view::npos) out += ".0";
}

void append_value(std::string& out, const rapidjson::Value& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      out += "null";
      return;
    case rapidjson::kFalseType:
      out += "false";
      return;
    case rapidjson::kTrueType:
      out += "true";
      return;
    case rapidjson::kStringType:
      append_json_string(out, std::string_view(v.GetString(), v.GetStringLength()));
      return;
    case rapidjson::kNumberType:
      if (v.IsUint64())
        out += std::to_string(v.GetUint64());
      else if (v.IsInt64())
        out += std::to_string(v.GetInt64());
      else
        append_double(out, v.GetDouble());
      return;
    case rapidjson::kArrayType: {
      out += '[';
      bool first = true;
      for (const auto& e : v.GetArray()) {
        if (!first) out += ", ";
        first = false;
        append_value(out, e);
      }
      out += ']';
      return;
    }
    case rapidjson::kObjectType: {
      std::vector<const rapidjson::Value::Member*> members;
      for (const auto& m : v.GetObject()) members.push_back(&m);
      std::sort(members.begin(), members.end(), [](auto* a, auto* b) {
        return std::string_view(a->name.GetString(), a->name.GetStringLength()) <
               std::string_view(b->name.GetString(), b->name.GetStringLength());
      });
      out += '{';
      bool first = true;
      for (auto* m : members) {
        if (!first) out += ", ";
        first = false;
        append_json_string(out, std::string_view(m->name.GetString(), m->name.GetStringLength()));
        out += ": ";
        append_value(out, m->value);
      }
      out += '}';
      return;
    }
  }
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\b') {
      out += "\\b";
    } else if (c == '\f') {
      out += "\\f";
    } else if (c < 0x20) {
      append_u(out, c);
    } else if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      // A UTF-8 sequence as \u escapes (surrogate pairs past U+FFFF).
      const int n = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1;
      unsigned cp = c & (0x3f >> n);
      for (int k = 0; k < n && i + 1 < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[++i]) & 0x3f);
      if (cp >= 0x10000) {
        cp -= 0x10000;
        append_u(out, 0xd800 + (cp >> 10));
        append_u(out, 0xdc00 + (cp & 0x3ff));
      } else {
        append_u(out, cp);
      }
    }
  }
  out += '"';
}

void append_json_or_null(std::string& out, const std::optional<std::string>& s) {
  if (s)
    append_json_string(out, *s);
  else
    out += "null";
}

bool out_json(const View& v, std::string& out) {
  out += "{\"data\": {";
  bool first_event = true;
  for (const auto& [id, book] : v.data) {
    if (!first_event) out += ", ";
    first_event = false;
    append_json_string(out, id);
    out += ": {";
    bool first_market = true;
    for (const auto& [mid, text] : book) {
      if (!first_market) out += ", ";
      first_market = false;
      append_json_string(out, mid);
      out += ": ";
      rapidjson::Document d;
      if (d.Parse(text.data(), text.size()).HasParseError()) return false;
      append_value(out, d);
    }
    out += '}';
  }
  out += "}, \"digest\": \"" + digest_hex(v.odds_digest) + "\", \"epoch\": ";
  append_json_or_null(out, v.epoch);
  out += ", \"seq\": ";
  out += v.seq ? std::to_string(*v.seq) : "null";
  out += '}';
  return true;
}

}  // namespace oddsrelay::client
