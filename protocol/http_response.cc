#include "protocol/http_response.h"

#include <cstdio>

namespace oddsrelay::http {

const char* reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 204:
      return "No Content";
    case 304:
      return "Not Modified";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 411:
      return "Length Required";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
  }
  return "Unknown";
}

void append_response(std::string& out, const ResponseHead& h, std::string_view body) {
  char line[96];
  int n = std::snprintf(line, sizeof line, "HTTP/1.1 %d %s\r\n", h.status, reason(h.status));
  out.append(line, static_cast<size_t>(n));
  if (h.status != 204 && h.status != 304) {
    out += "Content-Type: ";
    out += h.content_type;
    out += "\r\n";
    n = std::snprintf(line, sizeof line, "Content-Length: %zu\r\n", body.size());
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
  out += body;
}

}  // namespace oddsrelay::http
