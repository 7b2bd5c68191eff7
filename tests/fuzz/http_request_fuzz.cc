// libFuzzer target for the HTTP/1.1 request parser (protocol/http_request.h).
// The input is fed the way a socket delivers it: in pieces whose sizes come
// from the input's first byte, each request consumed from the front as the
// server does. Checks the parser's contract, not just absence of crashes.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "protocol/http_request.h"

using namespace oddsrelay::http;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t step = 1 + data[0] % 64;
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string buf;
  RequestParser parser;
  size_t fed = 0;
  while (fed < input.size()) {
    size_t n = std::min(step, input.size() - fed);
    buf.append(input.substr(fed, n));
    fed += n;
    for (;;) {
      Request req;
      ParseResult r = parser.parse(buf, req);
      if (r.status == ParseStatus::Incomplete) break;
      parser.reset();
      if (r.status == ParseStatus::Error) {
        if (r.error_status < 400 || r.error_status > 505) std::abort();
        return 0;  // the server closes the connection here
      }
      if (r.consumed == 0 || r.consumed > buf.size()) std::abort();
      if (req.body.data() < buf.data() || req.body.data() + req.body.size() > buf.data() + r.consumed) std::abort();
      if (req.path.empty() || req.headers.size() > 100) std::abort();
      (void)query_param(req.query, "ids");
      buf.erase(0, r.consumed);
    }
  }
  return 0;
}
