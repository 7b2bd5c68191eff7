// The SAX parse of one P frame (frame_ops.h).
#include "clients/cpp/frame_ops.h"

#include <rapidjson/encodedstream.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include <charconv>
#include <cstring>

#include "protocol/digest_terms.h"

namespace oddsrelay::client {

bool event_number(std::string_view id, uint64_t& out) {
  const size_t cut = id.find_last_of(".-");
  std::string_view digits = cut == std::string_view::npos ? id : id.substr(cut + 1);
  if (digits.empty()) return false;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
  return ec == std::errc() && p == digits.data() + digits.size();
}

namespace {

using Input = rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream>;

bool copy_field(char* dst, uint8_t& len, const char* s, size_t n) {
  if (n == 0 || n >= 24) return false;
  std::memcpy(dst, s, n);
  len = static_cast<uint8_t>(n);
  return true;
}

}  // namespace

// Depths: 1 inside the frame's object (keys: event or market ids), 2 inside
// an event or a market (keys: fields or line keys), 3 inside a line (keys:
// `s`, `ls` or outcome ids), 4 inside an outcome's tuple.
struct FrameHandler : rapidjson::BaseReaderHandler<rapidjson::UTF8<>, FrameHandler> {
  FrameParser& P;
  std::vector<FrameOp>& ops;
  Input& in;
  const char* text;
  bool odds;
  uint64_t number;
  int depth = 0;
  std::string_view key;    // the last key read at depth 1
  std::string_view field;  // the last key read at depth 2 or 3
  size_t start = 0;        // where the object at depth 2 began
  bool live = false;       // an event's "live"
  uint64_t sum = 0;        // a market's terms so far
  char line[32];           // the line key being read
  size_t line_len = 0;
  std::string_view line_s;  // its "s" (default 0)
  int tuple_index = -1;     // inside an outcome's tuple: the element's index

  FrameHandler(FrameParser& p, std::vector<FrameOp>& o, Input& s, const char* t, bool is_odds, uint64_t n)
      : P(p), ops(o), in(s), text(t), odds(is_odds), number(n) {}

  size_t pos() const { return in.Tell(); }

  // A scalar value: a depth-1 null is a removal; in a line, `s` and the
  // tuple's first two elements count; elsewhere scalars are carried as is.
  bool scalar(std::string_view raw_number, bool is_null) {
    if (depth == 0) return false;  // a frame's body is an object
    if (depth == 1) {
      if (!is_null) return false;
      ops.push_back({odds ? FrameOp::kMarket : FrameOp::kEvent, false, number, key, {}, 0});
      return true;
    }
    if (!odds) return true;
    if (depth == 2) return false;  // a line is an object
    if (depth == 3) {
      if (field == "s") {
        if (raw_number.empty()) return false;
        line_s = raw_number;
        return true;
      }
      return field == "ls";  // an outcome is a tuple
    }
    if (depth == 4 && tuple_index >= 0) {
      const int i = tuple_index++;
      if (i > 1) return true;
      if (raw_number.empty()) return false;  // price and flags are numbers
      auto& o = P.outcomes_.back();
      return i == 0 ? copy_field(o.price, o.price_len, raw_number.data(), raw_number.size())
                    : copy_field(o.flags, o.flags_len, raw_number.data(), raw_number.size());
    }
    return true;
  }

  bool Null() { return scalar({}, true); }
  bool Bool(bool b) {
    if (depth == 2 && !odds && field == "live") live = b;
    return scalar({}, false);
  }
  bool String(const char*, rapidjson::SizeType, bool) { return scalar({}, false); }
  bool RawNumber(const char*, rapidjson::SizeType n, bool) {
    // Not in situ: `s` is a copy; the text of a number is the same bytes in
    // the frame, just before where the reader stands.
    return scalar(std::string_view(text + pos() - n, n), false);
  }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    // Keys are used as the frame spells them: one with an escape is not a
    // key this server sends.
    std::string_view raw(text + pos() - 1 - n, n);
    if (raw != std::string_view(s, n)) return false;
    if (depth == 1) {
      key = raw;
      if (!odds && !event_number(raw, number)) return false;
    } else if (depth == 2 && odds) {
      if (n >= sizeof line) return false;
      std::memcpy(line, s, n);
      line_len = n;
    } else {
      field = raw;
    }
    return true;
  }
  bool StartObject() {
    ++depth;
    if (depth == 2) {
      start = pos() - 1;
      live = false;
      sum = 0;
      field = {};
    } else if (depth == 3 && odds) {
      line_s = {};
      P.outcomes_.clear();
    } else if (depth == 4 && odds) {
      return false;  // an outcome is a tuple, not an object
    } else if (depth == 5 && odds && tuple_index >= 0) {
      ++tuple_index;  // an element of the tuple
    }
    return true;
  }
  bool EndObject(rapidjson::SizeType) {
    if (depth == 3 && odds && !end_line()) return false;
    if (depth == 2) {
      std::string_view json(text + start, pos() - start);
      ops.push_back({odds ? FrameOp::kMarket : FrameOp::kEvent, live, number, key, json, sum});
    }
    --depth;
    return true;
  }
  bool StartArray() {
    // Not a frame, an event's or a market's place, nor a line.
    if (depth < 2 || (odds && depth == 2)) return false;
    if (depth == 4 && odds && tuple_index >= 0) ++tuple_index;  // an element of the tuple
    ++depth;
    if (depth == 4 && odds) {
      if (field == "s") return false;
      P.outcomes_.emplace_back();
      auto& o = P.outcomes_.back();
      if (!copy_field(o.id, o.id_len, field.data(), field.size())) return false;
      o.price_len = o.flags_len = 0;
      tuple_index = 0;
    }
    return true;
  }
  bool EndArray(rapidjson::SizeType) {
    if (depth == 4 && odds && tuple_index >= 0) {
      const auto& o = P.outcomes_.back();
      if (o.price_len == 0 || o.flags_len == 0) return false;  // fewer than two elements
      tuple_index = -1;
    }
    --depth;
    return true;
  }
  // A line's outcomes, now that its `s` is known.
  bool end_line() {
    const std::string_view s = line_s.empty() ? std::string_view("0") : line_s;
    for (const auto& o : P.outcomes_) {
      TermText t;
      t.add_int(number)
          .add(key)
          .add(std::string_view(line, line_len))
          .add(std::string_view(o.id, o.id_len))
          .add(std::string_view(o.price, o.price_len))
          .add(std::string_view(o.flags, o.flags_len))
          .add(s);
      if (!t.ok()) return false;
      sum += t.hash();
    }
    return true;
  }
};

bool FrameParser::parse(std::string_view channel, std::string_view body, std::vector<FrameOp>& ops) {
  const size_t before = ops.size();
  bool odds = false;
  uint64_t number = 0;
  if (channel.starts_with("evt:")) {
    odds = false;
  } else if (channel.starts_with("odds:")) {
    odds = true;
    const size_t colon = channel.find(':', 5);
    if (colon == std::string_view::npos) return false;
    std::string_view n = channel.substr(colon + 1);
    auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), number);
    if (ec != std::errc() || p != n.data() + n.size() || n.empty()) return false;
    ops.push_back({FrameOp::kBook, false, number, {}, {}, 0});
  } else {
    return false;
  }
  rapidjson::MemoryStream ms(body.data(), body.size());
  Input in(ms);
  FrameHandler h(*this, ops, in, body.data(), odds, number);
  // One reader per thread: a reader allocates its parse stack on first use
  // and keeps it, so a frame costs no allocation.
  thread_local rapidjson::Reader reader;
  constexpr unsigned kFlags = rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseStopWhenDoneFlag;
  const bool ok = !reader.Parse<kFlags>(in, h).IsError() && in.Tell() == body.size() && h.depth == 0;
  if (!ok) ops.resize(before);
  return ok;
}

}  // namespace oddsrelay::client
