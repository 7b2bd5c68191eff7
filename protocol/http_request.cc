#include "protocol/http_request.h"

#include <cstring>

#include "protocol/utf8.h"

namespace oddsrelay::http {
namespace {

bool is_tchar(unsigned char c) {
  if (c >= '0' && c <= '9') return true;
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return true;
  return std::strchr("!#$%&'*+-.^_`|~", c) != nullptr && c != 0;
}

bool is_vchar_or_ws(unsigned char c) { return c == '\t' || c == ' ' || (c > 0x20 && c != 0x7f); }

ParseResult fail(int status, const char* why) {
  ParseResult r;
  r.status = ParseStatus::Error;
  r.error_status = status;
  r.error = why;
  return r;
}

std::string_view trim(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

bool contains_token(std::string_view list, std::string_view token) {
  while (!list.empty()) {
    size_t comma = list.find(',');
    if (iequals(trim(list.substr(0, comma)), token)) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') return (c | 0x20) - 'a' + 10;
  return -1;
}

}  // namespace

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x + 32);
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y + 32);
    if (x != y) return false;
  }
  return true;
}

std::string_view Request::header(std::string_view name) const {
  for (const auto& h : headers)
    if (iequals(h.name, name)) return h.value;
  return {};
}

ParseResult RequestParser::parse(std::string_view buf, Request& out) {
  // Find the end of the headers, resuming where the last call stopped.
  size_t from = scanned_ >= 3 ? scanned_ - 3 : 0;
  size_t end = buf.find("\r\n\r\n", from);
  if (end == std::string_view::npos) {
    // A line ended by a bare LF would never make the CRLF CRLF above: refused
    // now rather than held until the header timeout.
    for (size_t lf = buf.find('\n', scanned_); lf != std::string_view::npos; lf = buf.find('\n', lf + 1))
      if (lf == 0 || buf[lf - 1] != '\r')
        return fail(400, buf.find('\n') == lf ? "Bare LF in request line" : "Bare LF in header");
    scanned_ = buf.size();
    size_t first_nl = buf.find('\n');
    if (first_nl == std::string_view::npos && buf.size() > limits_.request_line)
      return fail(414, "Request line too long");
    if (buf.size() > limits_.request_line + limits_.header_bytes) return fail(431, "Request headers too large");
    return {};
  }
  std::string_view head = buf.substr(0, end + 2);  // lines, each ending in CRLF

  // Request line.
  size_t eol = head.find("\r\n");
  std::string_view line = head.substr(0, eol);
  if (line.size() > limits_.request_line) return fail(414, "Request line too long");
  if (line.find('\n') != std::string_view::npos) return fail(400, "Bare LF in request line");
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos)
    return fail(400, "Malformed request line");
  out.method = line.substr(0, sp1);
  out.target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  if (out.method.empty() || out.method.size() > 16) return fail(400, "Malformed request line");
  for (char c : out.method)
    if (c < 'A' || c > 'Z') return fail(400, "Malformed request line");
  if (out.target.empty() || (out.target[0] != '/' && out.target != "*")) return fail(400, "Malformed request target");
  for (unsigned char c : out.target)
    if (c <= 0x20 || c == 0x7f) return fail(400, "Malformed request target");
  if (version == "HTTP/1.1")
    out.minor = 1;
  else if (version == "HTTP/1.0")
    out.minor = 0;
  else if (version.substr(0, 5) == "HTTP/")
    return fail(505, "HTTP version not supported");
  else
    return fail(400, "Malformed request line");
  size_t q = out.target.find('?');
  out.path = out.target.substr(0, q);
  out.query = q == std::string_view::npos ? std::string_view() : out.target.substr(q + 1);

  // Header fields.
  out.headers.clear();
  std::string_view rest = head.substr(eol + 2);
  if (rest.size() > limits_.header_bytes) return fail(431, "Request headers too large");
  while (!rest.empty()) {
    size_t e = rest.find("\r\n");
    std::string_view f = rest.substr(0, e);
    rest.remove_prefix(e + 2);
    if (f.find('\n') != std::string_view::npos) return fail(400, "Bare LF in header");
    if (f.empty() || f[0] == ' ' || f[0] == '\t') return fail(400, "Obsolete header folding");
    size_t colon = f.find(':');
    if (colon == 0 || colon == std::string_view::npos) return fail(400, "Malformed header");
    std::string_view name = f.substr(0, colon);
    for (unsigned char c : name)
      if (!is_tchar(c)) return fail(400, "Malformed header name");
    std::string_view value = trim(f.substr(colon + 1));
    for (unsigned char c : value)
      if (!is_vchar_or_ws(c)) return fail(400, "Malformed header value");
    if (out.headers.size() == limits_.header_fields) return fail(431, "Too many request headers");
    out.headers.push_back({name, value});
  }

  // Framing: Content-Length only.
  std::optional<size_t> length;
  bool chunked = false;
  int hosts = 0;  // RFC 9112 3.2: two Host lines are a 400, as none in HTTP/1.1 is
  for (const auto& h : out.headers) {
    if (iequals(h.name, "Host") && ++hosts > 1) return fail(400, "More than one Host header");
    if (iequals(h.name, "Transfer-Encoding")) chunked = true;
    if (!iequals(h.name, "Content-Length")) continue;
    if (h.value.empty() || h.value.size() > 12) return fail(400, "Invalid Content-Length");
    size_t n = 0;
    for (char c : h.value) {
      if (c < '0' || c > '9') return fail(400, "Invalid Content-Length");
      n = n * 10 + static_cast<size_t>(c - '0');
    }
    if (length && *length != n) return fail(400, "Conflicting Content-Length");
    length = n;
  }
  if (chunked && length) return fail(400, "Content-Length with Transfer-Encoding");
  if (chunked) return fail(411, "Length Required: send the body with a Content-Length");
  if (out.minor == 1 && out.header("Host").empty()) return fail(400, "Missing Host header");
  size_t body_len = length.value_or(0);
  if (body_len > limits_.body) return fail(413, "Request body too large");
  size_t total = end + 4 + body_len;
  if (buf.size() < total) {  // body still arriving
    ParseResult r;
    r.expect_continue = out.minor == 1 && iequals(trim(out.header("Expect")), "100-continue");
    return r;
  }
  out.body = buf.substr(end + 4, body_len);

  std::string_view conn = out.header("Connection");
  out.keep_alive = out.minor == 1 ? !contains_token(conn, "close") : contains_token(conn, "keep-alive");
  ParseResult r;
  r.status = ParseStatus::Complete;
  r.consumed = total;
  return r;
}

std::optional<std::string> query_param(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view kv = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    size_t eq = kv.find('=');
    if (kv.substr(0, eq) != name) continue;
    std::string_view raw = eq == std::string_view::npos ? std::string_view() : kv.substr(eq + 1);
    std::string v;
    v.reserve(raw.size());
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '+')
        v += ' ';
      else if (raw[i] == '%' && i + 2 < raw.size() && hexval(raw[i + 1]) >= 0 && hexval(raw[i + 2]) >= 0) {
        v += static_cast<char>(hexval(raw[i + 1]) * 16 + hexval(raw[i + 2]));
        i += 2;
      } else
        v += raw[i];
    }
    if (!valid_utf8(v)) v = replace_invalid_utf8(v);
    return v;
  }
  return std::nullopt;
}

}  // namespace oddsrelay::http
