// A strict HTTP/1.1 request parser (RFC 9112) with hard bounds, for the REST
// listener. No I/O: it takes the bytes a connection has buffered and says
// whether a whole request is there, how many bytes it used, or which status
// to refuse it with. Views in Request point into the caller's buffer.
//
// Refused: request line over 8 KiB (414), headers over 16 KiB or 100 fields
// (431), Content-Length over 1 MiB (413), Transfer-Encoding (411: bodies
// must carry a Content-Length), Content-Length together with
// Transfer-Encoding or twice with different values (400, no smuggling),
// obsolete line folding, whitespace before a colon, bare LF, a missing Host
// on HTTP/1.1 (400), any version but 1.0 and 1.1 (505).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace oddsrelay::http {

struct Limits {
  size_t request_line = 8 * 1024;
  size_t header_bytes = 16 * 1024;
  size_t header_fields = 100;
  size_t body = 1024 * 1024;
};

struct Header {
  std::string_view name, value;
};

struct Request {
  std::string_view method, target, path, query;  // query: after '?', without it
  int minor = 1;                                 // HTTP/1.<minor>
  std::vector<Header> headers;
  std::string_view body;
  bool keep_alive = true;

  // The first header of that name (case-insensitive), empty if none.
  std::string_view header(std::string_view name) const;
};

enum class ParseStatus : uint8_t { Incomplete, Complete, Error };

struct ParseResult {
  ParseStatus status = ParseStatus::Incomplete;
  size_t consumed = 0;     // Complete: bytes of this request, body included
  int error_status = 0;    // Error: the HTTP status to answer with
  const char* error = "";  // Error: why, for the {"error"} body
  // Incomplete: the headers are whole, the body is still to come, and they
  // asked `Expect: 100-continue` (RFC 9110 10.1.1): the server sends
  // `100 Continue` once, or the client waits (about a second, in curl
  // before 7.80 for a body past 1 KB) before sending it.
  bool expect_continue = false;
};

// Incremental driver: remembers how far it has looked for the end of the
// headers, so a slow client sending a byte at a time costs linear work.
class RequestParser {
 public:
  explicit RequestParser(Limits limits = {}) : limits_(limits) {}
  // `buf` holds everything received and not yet consumed; it only grows
  // between calls until a Complete or Error result, then call reset().
  [[nodiscard]] ParseResult parse(std::string_view buf, Request& out);
  void reset() { scanned_ = 0; }
  // How far the search for the end of the headers has got (for the tests).
  size_t scanned() const { return scanned_; }

 private:
  Limits limits_;
  size_t scanned_ = 0;
};

bool iequals(std::string_view a, std::string_view b);
// `s` without the spaces and tabs around it (a header list item's OWS).
inline std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The value of query parameter `name` ('+' and %XX decoded), if present.
// Bytes that are not UTF-8 read as U+FFFD each: an answer echoing the value
// (`not_found`) stays valid JSON.
std::optional<std::string> query_param(std::string_view query, std::string_view name);

}  // namespace oddsrelay::http
