// Parses feed-format lines (docs/feed-format.md) into typed records. No I/O: the
// replay source, the journal and the tests hand it one line at a time. Bad
// input is a value (LineStatus plus a one-line reason), never an exception,
// so a malformed line is reported, counted and skipped by the caller.
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/feed_record.h"

namespace oddsrelay::feed {

enum class LineStatus : uint8_t {
  Record,              // `out` holds a record
  Header,              // a valid header line; provider() is set
  Blank,               // empty or whitespace only
  UnknownOp,           // skipped for forward compatibility, counted
  Malformed,           // bad JSON or a known field of the wrong type; error() says which
  BadChecksum,         // carries an `xxh` checksum that does not match
  UnsupportedVersion,  // header of another major version: the caller stops
};

// An outcome's key: a positive decimal id of at most nine digits.
[[nodiscard]] bool outcome_key(const char* s, size_t len, uint32_t& id);

class FeedParser {
 public:
  FeedParser();
  FeedParser(const FeedParser&) = delete;
  FeedParser& operator=(const FeedParser&) = delete;

  // Parses one line (a trailing '\r' or '\n' is ignored).
  [[nodiscard]] LineStatus parse(std::string_view line, Record& out);

  // Whether parse() keeps each record's line in Record::text (off: empty).
  void keep_text(bool on) { keep_text_ = on; }
  // Whether plain market lines take the SAX fast path (on by default; the
  // tests turn it off to compare it with the DOM path), and how many did.
  void fast_markets(bool on) { fast_markets_ = on; }
  uint64_t fast_market_records() const { return fast_market_records_; }

  const std::string& error() const { return error_; }        // after Malformed etc.
  const std::string& provider() const { return provider_; }  // from the header
  uint64_t unknown_fields() const { return unknown_fields_; }

 private:
  LineStatus fail(std::string msg);
  // The SAX fast path for a plain market line (feed_market_sax.cc), on the
  // NUL-terminated copy `text`, which it rewrites. False when it gives up:
  // the line is then parsed again on the DOM path below.
  bool parse_market_fast(char* text, Record& out);
  LineStatus parse_header(const rapidjson::Value& v);
  bool parse_event(const rapidjson::Value& v, Record& out);
  bool parse_market(const rapidjson::Value& v, Record& out);
  bool parse_score(const rapidjson::Value& v, Record& out);
  bool parse_stats(const rapidjson::Value& v, Record& out);

  // Fixed buffers so that parsing a line does not call malloc in the
  // common case; the pools are cleared before each line.
  char value_buf_[32 * 1024];
  char stack_buf_[8 * 1024];
  rapidjson::MemoryPoolAllocator<> value_pool_;
  rapidjson::MemoryPoolAllocator<> stack_pool_;
  std::string scratch_;  // in-situ copy of the line
  // The fast path's lines and outcomes, reused from line to line.
  std::vector<LineIn> fast_lines_;
  std::vector<OutcomeIn> fast_outcomes_;
  std::string error_;
  std::string provider_;
  uint64_t unknown_fields_ = 0;
  uint64_t fast_market_records_ = 0;
  bool keep_text_ = false;
  bool fast_markets_ = true;
};

}  // namespace oddsrelay::feed
