// Encodes typed records back into feed-format lines (docs/feed-format.md). Capture
// files and the journal are written with it, so what was applied can be
// replayed into a fresh engine with identical results.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/feed_record.h"
#include "protocol/json_out.h"

namespace oddsrelay::feed {

// Appends one record as a JSON line to `out`, without the trailing newline.
void write_record(const Record& rec, std::string& out);

// The members every record line opens with (at, op, id), into an open
// object: the snapshot's state lines open the same way.
void write_record_head(json::Writer& w, int64_t at, const char* op, std::string_view id);

// Appends the header line (no newline).
void write_header(std::string_view provider, std::string& out);
// The header's members (op, format, version, provider) into an open object:
// a file that says more of itself (a snapshot) writes its own after them.
void write_header_fields(json::Writer& w, std::string_view provider);

// The journal's per-record checksum. A checksummed line is the plain line
// with `,"xxh":"<16 hex>"` inserted before its closing brace; the checksum is
// XXH3-64 over the plain line. Readers that do not know the field skip it.
inline constexpr std::string_view kChecksumField = ",\"xxh\":\"";
inline constexpr size_t kChecksumSuffixLen = 8 + 16 + 2;  // ,"xxh":" + hex + "}

// Turns the plain line ending at out.size() (starting at `start`) into its
// checksummed form.
void append_checksum(std::string& out, size_t start);
// The same for a plain `line` held elsewhere: writes to `out` the
// kChecksumSuffixLen bytes that take the place of its closing brace.
void checksum_suffix(std::string_view line, char* out);

// Appends one checksummed line: the object `members` writes, its checksum,
// then a newline.
template <class F>
void append_checksummed_line(std::string& out, F&& members) {
  const size_t start = out.size();
  json::append_object(out, members);
  append_checksum(out, start);
  out += '\n';
}

enum class ChecksumState : uint8_t { Absent, Valid, Invalid };
// Checks a line that may carry the checksum field (Absent when it has none).
[[nodiscard]] ChecksumState verify_checksum(std::string_view line);

}  // namespace oddsrelay::feed
