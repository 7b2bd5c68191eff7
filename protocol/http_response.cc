#include "protocol/http_response.h"

#include <cstdio>

namespace oddsrelay::http {

// Every status of RFC 9110 section 15 (and 428/429/431/511 of RFC 6585),
// so a status added to a handler later cannot go out as "Unknown".
const char* reason(int status) {
  // One status a line reads as the table it is.
  // clang-format off
  switch (status) {
    case 100: return "Continue";
    case 101: return "Switching Protocols";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 203: return "Non-Authoritative Information";
    case 204: return "No Content";
    case 205: return "Reset Content";
    case 206: return "Partial Content";
    case 300: return "Multiple Choices";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 303: return "See Other";
    case 304: return "Not Modified";
    case 305: return "Use Proxy";
    case 307: return "Temporary Redirect";
    case 308: return "Permanent Redirect";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 402: return "Payment Required";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 407: return "Proxy Authentication Required";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 411: return "Length Required";
    case 412: return "Precondition Failed";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 416: return "Range Not Satisfiable";
    case 417: return "Expectation Failed";
    case 421: return "Misdirected Request";
    case 422: return "Unprocessable Content";
    case 426: return "Upgrade Required";
    case 428: return "Precondition Required";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    case 511: return "Network Authentication Required";
  }
  // clang-format on
  return "Unknown";
}

void append_response(std::string& out, const ResponseHead& h, std::string_view body) {
  append_head(out, h, body.size());
  out += body;
}

void append_head(std::string& out, const ResponseHead& h, size_t body_size) {
  char line[96];
  int n = std::snprintf(line, sizeof line, "HTTP/1.1 %d %s\r\n", h.status, reason(h.status));
  out.append(line, static_cast<size_t>(n));
  if (h.status != 204 && h.status != 304) {
    out += "Content-Type: ";
    out += h.content_type;
    out += "\r\n";
    n = std::snprintf(line, sizeof line, "Content-Length: %zu\r\n", body_size);
    out.append(line, static_cast<size_t>(n));
  }
  if (!h.content_encoding.empty()) {
    out += "Content-Encoding: ";
    out += h.content_encoding;
    out += "\r\nVary: Accept-Encoding\r\n";
  }
  out += "Access-Control-Allow-Origin: *\r\n";
  out += h.extra;
  out += h.keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
}

}  // namespace oddsrelay::http
