// The one way JSON from outside becomes a document: REST bodies, stream
// client messages, feed lines (replay, capture, the bus), bus snapshot
// heads and chunks, the keys file and the catalog. RapidJSON's iterative
// parser (kParseIterativeFlag: its state on the heap, never one stack
// frame a nesting level) drives a handler that bounds every dimension
// before the document grows: nesting depth, members an object, items an
// array, bytes a string or key, characters a number. Numbers arrive as
// their text and are converted here, exactly: an integer that does not fit
// 64 bits is refused, never rounded into a double, and a decimal must be
// finite. UTF-8 is validated, NaN and Infinity are not JSON, and duplicate
// keys are refused where the limits say so. A refusal is a value naming
// the limit (docs/api.md "Limits"); nothing here throws or recurses on the
// caller's stack, whatever the input (the 10^6-level bombs of
// tests/e2e/test_hostile_input.py, the json_in fuzz target).
#pragma once

#include <rapidjson/document.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace oddsrelay::json {

struct InLimits {
  uint32_t depth = 64;           // containers open at once; at most kMaxDepth
  uint32_t members = 1000;       // keys in one object
  uint32_t items = 10'000;       // values in one array
  uint32_t string_bytes = 4096;  // one string or key, in bytes
  uint32_t number_chars = 32;    // one number literal
  bool unique_keys = true;       // a key twice in one object is refused
};
inline constexpr uint32_t kMaxDepth = 128;

// What a REST body or a stream client message may hold (docs/api.md "Limits").
inline constexpr InLimits kRequestLimits{};
// Feed lines and bus messages: records may carry large ladders and long
// names; the depth bound is what matters, and it stays. Duplicate keys are
// the feed's business (the first one counts, as it always has).
inline constexpr InLimits kFeedLimits{64, 1'000'000, 1'000'000, 1 << 20, 32, false};
// Files the operator writes (keys file, catalog): large, but not deep.
inline constexpr InLimits kFileLimits{64, 1'000'000, 10'000'000, 1 << 20, 32, true};

enum class InError : uint8_t {
  None,
  Syntax,          // not JSON (RapidJSON's own message in InResult::detail)
  TooDeep,         // nesting past depth
  TooManyMembers,  // an object with more than members keys
  TooManyItems,    // an array with more than items values
  StringTooLong,   // a string or key past string_bytes
  NumberTooLong,   // a number literal past number_chars
  NumberRange,     // an integer outside 64 bits, or a decimal that is not finite
  InvalidUtf8,     // a string that is not UTF-8
  NotFinite,       // NaN or Infinity
  DuplicateKey,    // a key twice in one object
};

struct [[nodiscard]] InResult {
  InError error = InError::None;
  size_t offset = 0;   // byte offset of the refusal in the input
  std::string detail;  // Syntax: RapidJSON's text; DuplicateKey: the key
  explicit operator bool() const { return error == InError::None; }
  // "nested deeper than 64 levels", "invalid JSON at offset 3: ...": what
  // follows "Invalid body: " or "Malformed message: " in an answer.
  std::string message(const InLimits& limits) const;
  // Whether the input broke a limit, rather than not being JSON at all.
  bool over_limit() const { return error != InError::None && error != InError::Syntax; }
};

// The document types the callers use: RapidJSON's default, and the feed
// reader's, whose values and parse stack live in pools it reuses a line.
using Doc = rapidjson::Document;
using PoolDoc =
    rapidjson::GenericDocument<rapidjson::UTF8<>, rapidjson::MemoryPoolAllocator<>, rapidjson::MemoryPoolAllocator<>>;

// RapidJSON's in-situ stream, but never past the terminating NUL. With
// kParseValidateEncodingFlag RapidJSON takes a multi-byte character's
// continuation bytes without looking for the end, so its own in-situ stream
// read up to three bytes past a line that ends in a truncated character
// (found by the json_in fuzz target). Here a NUL is taken as itself and
// stays put: the character is invalid, the parse stops there.
struct InsituStream {
  using Ch = char;
  explicit InsituStream(char* src) : src_(src), dst_(nullptr), head_(src) {}
  Ch Peek() const { return *src_; }
  Ch Take() {
    const Ch c = *src_;
    src_ += c != '\0';
    return c;
  }
  size_t Tell() const { return static_cast<size_t>(src_ - head_); }
  Ch* PutBegin() { return dst_ = src_; }
  void Put(Ch c) { *dst_++ = c; }
  size_t PutEnd(Ch* begin) { return static_cast<size_t>(dst_ - begin); }
  void Flush() {}
  Ch* Push(size_t count) {
    Ch* begin = dst_;
    dst_ += count;
    return begin;
  }
  void Pop(size_t count) { dst_ -= count; }

  Ch* src_;   // what the reader reads next
  Ch* dst_;   // where an unescaped string is written back
  Ch* head_;  // the start, for Tell
};

// Parses `text` into `doc` (its previous value is dropped). On a refusal
// `doc` is null. Only whitespace may follow the root value.
InResult parse(std::string_view text, Doc& doc, const InLimits& limits = kRequestLimits);
// In situ: strings point into `text` (NUL-terminated, rewritten), which must
// outlive `doc`.
InResult parse_insitu(char* text, PoolDoc& doc, const InLimits& limits);

}  // namespace oddsrelay::json
