// protocol/json_in.h: the bounded parse. A handler sits between RapidJSON's
// iterative reader and the document, counting what each open container
// holds and refusing the first value past a limit; the document then never
// grows past the limits, and the reader stops at that byte.

#include "protocol/json_in.h"

#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <vector>

namespace oddsrelay::json {
namespace {

constexpr unsigned kFlags =
    rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag | rapidjson::kParseNumbersAsStringsFlag;

// Forwards every SAX event to the document's own handler once it is within
// the limits. Which container is open, and how much it holds, is kept here
// for at most kMaxDepth levels (the limit is clamped to that).
template <typename Target>
class Bounded {
 public:
  Bounded(Target& t, const InLimits& l) : t_(t), l_(l), depth_limit_(std::min(l.depth, kMaxDepth)) {}

  bool Null() { return value() && t_.Null(); }
  bool Bool(bool b) { return value() && t_.Bool(b); }
  // Never called: numbers come as text (kParseNumbersAsStringsFlag).
  bool Int(int) { return false; }
  bool Uint(unsigned) { return false; }
  bool Int64(int64_t) { return false; }
  bool Uint64(uint64_t) { return false; }
  bool Double(double) { return false; }
  bool RawNumber(const char* s, rapidjson::SizeType len, bool) { return value() && number(s, len); }
  bool String(const char* s, rapidjson::SizeType len, bool copy) {
    if (!value()) return false;
    if (len > l_.string_bytes) return fail(InError::StringTooLong);
    if (escaped_surrogate(s, len)) return fail(InError::InvalidUtf8);
    return t_.String(s, len, copy);
  }
  bool Key(const char* s, rapidjson::SizeType len, bool copy) {
    if (++open_[depth_ - 1].count > l_.members) return fail(InError::TooManyMembers);
    if (len > l_.string_bytes) return fail(InError::StringTooLong);
    if (escaped_surrogate(s, len)) return fail(InError::InvalidUtf8);
    return t_.Key(s, len, copy);
  }
  bool StartObject() { return open(false) && t_.StartObject(); }
  bool EndObject(rapidjson::SizeType n) { return --depth_, t_.EndObject(n); }
  bool StartArray() { return open(true) && t_.StartArray(); }
  bool EndArray(rapidjson::SizeType n) { return --depth_, t_.EndArray(n); }

  InError error() const { return error_; }

 private:
  struct Open {
    bool array = false;
    uint32_t count = 0;  // members or items so far
  };

  bool fail(InError e) { return error_ = e, false; }
  // The reader validates the bytes it reads, but decodes a lone low
  // surrogate escape ("\udc00") into the three bytes of a surrogate, which
  // are not UTF-8 and would go out again in an answer that echoes them.
  // Raw surrogate bytes never get here; only a decoded escape can.
  static bool escaped_surrogate(const char* s, rapidjson::SizeType len) {
    for (const char* p = s; (p = static_cast<const char*>(std::memchr(p, '\xed', s + len - p))) != nullptr; ++p)
      if (p + 1 < s + len && static_cast<unsigned char>(p[1]) >= 0xa0) return true;
    return false;
  }
  // Every value counts as an item of the array it stands in.
  bool value() {
    if (depth_ > 0 && open_[depth_ - 1].array && ++open_[depth_ - 1].count > l_.items)
      return fail(InError::TooManyItems);
    return true;
  }
  bool open(bool array) {
    if (!value()) return false;
    if (depth_ >= depth_limit_) return fail(InError::TooDeep);
    open_[depth_++] = Open{array, 0};
    return true;
  }
  // As RapidJSON's reader would hand it over (Int/Uint for 32 bits, the 64-bit
  // calls past that), but an integer past 64 bits is refused, not rounded.
  bool number(const char* s, rapidjson::SizeType len) {
    if (len > l_.number_chars) return fail(InError::NumberTooLong);
    const char* end = s + len;
    if (std::find_if(s, end, [](char c) { return c == '.' || c == 'e' || c == 'E'; }) == end) {
      if (*s == '-') {
        int64_t v = 0;
        if (std::from_chars(s, end, v).ec != std::errc()) return fail(InError::NumberRange);
        return v >= INT32_MIN ? t_.Int(static_cast<int>(v)) : t_.Int64(v);
      }
      uint64_t v = 0;
      if (std::from_chars(s, end, v).ec != std::errc()) return fail(InError::NumberRange);
      return v <= UINT32_MAX ? t_.Uint(static_cast<unsigned>(v)) : t_.Uint64(v);
    }
    double v = 0;
    if (std::from_chars(s, end, v).ec != std::errc() || !std::isfinite(v)) return fail(InError::NumberRange);
    return t_.Double(v);
  }

  Target& t_;
  const InLimits& l_;
  const uint32_t depth_limit_;
  uint32_t depth_ = 0;
  std::array<Open, kMaxDepth> open_;
  InError error_ = InError::None;
};

// The first key that stands twice in one object, if any. The document is at
// most kMaxDepth deep here, so the walk may recurse.
template <typename Value>
const Value* duplicate_key(const Value& v) {
  if (v.IsArray()) {
    for (const auto& item : v.GetArray())
      if (const Value* d = duplicate_key(item)) return d;
    return nullptr;
  }
  if (!v.IsObject()) return nullptr;
  if (v.MemberCount() > 1) {
    std::vector<const Value*> names;
    names.reserve(v.MemberCount());
    for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) names.push_back(&m->name);
    auto view = [](const Value* n) { return std::string_view(n->GetString(), n->GetStringLength()); };
    std::sort(names.begin(), names.end(), [&](auto* a, auto* b) { return view(a) < view(b); });
    auto same = std::adjacent_find(names.begin(), names.end(), [&](auto* a, auto* b) { return view(a) == view(b); });
    if (same != names.end()) return *same;
  }
  for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m)
    if (const Value* d = duplicate_key(m->value)) return d;
  return nullptr;
}

// NaN, Infinity and -Infinity are refused as RapidJSON refuses any bad
// value; say which, since other parsers take them.
bool not_finite_literal(std::string_view rest) {
  if (!rest.empty() && rest[0] == '-') rest.remove_prefix(1);
  return rest.starts_with("NaN") || rest.starts_with("Inf");
}

template <typename D, typename Stream>
InResult run(D& doc, Stream& in, std::string_view text, const InLimits& limits) {
  InResult r;
  rapidjson::ParseResult pr;
  InError refused = InError::None;
  auto generate = [&](D& target) {
    Bounded<D> h(target, limits);
    // One reader a thread: its parse stack (a few bytes a level, 64 levels)
    // keeps its capacity, so a parse allocates nothing of its own.
    thread_local rapidjson::Reader reader;
    pr = reader.template Parse<kFlags>(in, h);
    refused = h.error();
    return !pr.IsError();
  };
  doc.SetNull();
  doc.Populate(generate);
  // The reader takes a NUL for the end of the text; a NUL inside a body is
  // a byte after the root value, which is not JSON.
  if (!pr.IsError() && in.Tell() < text.size()) pr.Set(rapidjson::kParseErrorDocumentRootNotSingular, in.Tell());
  if (!pr.IsError()) {
    if (!limits.unique_keys) return r;
    if (const auto* key = duplicate_key<typename D::ValueType>(doc)) {
      r.error = InError::DuplicateKey;
      r.detail.assign(key->GetString(), key->GetStringLength());
      doc.SetNull();
    }
    return r;
  }
  doc.SetNull();
  r.offset = pr.Offset();
  if (refused != InError::None) {
    r.error = refused;
  } else if (pr.Code() == rapidjson::kParseErrorStringInvalidEncoding ||
             pr.Code() == rapidjson::kParseErrorStringUnicodeSurrogateInvalid) {
    r.error = InError::InvalidUtf8;
  } else if (pr.Code() == rapidjson::kParseErrorNumberTooBig) {
    r.error = InError::NumberRange;  // an exponent past a double's range
  } else if (pr.Code() == rapidjson::kParseErrorValueInvalid && r.offset < text.size() &&
             not_finite_literal(text.substr(r.offset))) {
    r.error = InError::NotFinite;
  } else {
    r.error = InError::Syntax;
    r.detail = rapidjson::GetParseError_En(pr.Code());
  }
  return r;
}

}  // namespace

std::string InResult::message(const InLimits& l) const {
  auto n = [](uint32_t v) { return std::to_string(v); };
  switch (error) {
    case InError::None:
      return {};
    case InError::Syntax:
      return "invalid JSON at offset " + std::to_string(offset) + ": " + detail;
    case InError::TooDeep:
      return "nested deeper than " + n(std::min(l.depth, kMaxDepth)) + " levels";
    case InError::TooManyMembers:
      return "an object with more than " + n(l.members) + " keys";
    case InError::TooManyItems:
      return "an array with more than " + n(l.items) + " items";
    case InError::StringTooLong:
      return "a string longer than " + n(l.string_bytes) + " bytes";
    case InError::NumberTooLong:
      return "a number longer than " + n(l.number_chars) + " characters";
    case InError::NumberRange:
      return "a number out of range (integers fit 64 bits, decimals are finite)";
    case InError::InvalidUtf8:
      return "invalid UTF-8 in a string";
    case InError::NotFinite:
      return "NaN and Infinity are not JSON";
    case InError::DuplicateKey: {
      // At most 64 bytes of the key, cut between characters: the text may
      // go out in a WebSocket text message, which must stay UTF-8.
      size_t n = std::min<size_t>(detail.size(), 64);
      while (n < detail.size() && n > 0 && (static_cast<unsigned char>(detail[n]) & 0xC0) == 0x80) --n;
      return "duplicate key \"" + detail.substr(0, n) + "\"";
    }
  }
  return {};
}

InResult parse(std::string_view text, Doc& doc, const InLimits& limits) {
  // MemoryStream, not StringStream: the text need not end in a NUL, and a
  // NUL inside it is a byte like any other (refused as JSON). Read bare, not
  // through RapidJSON's EncodedInputStream, which skips a byte-order mark
  // byte by byte (a lone 0xEF before the value too, as the json_in target
  // found): a text parses the same here and in situ, and a BOM is not JSON.
  rapidjson::MemoryStream in(text.data(), text.size());
  return run(doc, in, text, limits);
}

InResult parse_insitu(char* text, PoolDoc& doc, const InLimits& limits) {
  InsituStream in(text);
  // The view is for the NaN check, which reads at the refused offset: the
  // reader rewrites only what it has passed.
  return run(doc, in, std::string_view(text), limits);
}

}  // namespace oddsrelay::json
