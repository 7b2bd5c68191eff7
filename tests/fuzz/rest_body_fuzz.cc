// libFuzzer target for the REST body parsers (POST /v1/odds, POST /rdstn):
// any body is answered a value or a 400 text, never a crash; a body that
// parses holds what the route reads (an object with an unsigned market and
// at most the id limit plus one; an array of at most 50 commands).
#include <cstdint>
#include <cstdlib>
#include <string>

#include "rest/odds_body.h"
#include "rest/rdstn_request.h"

using namespace oddsrelay::rest;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  OddsBody odds;
  const std::string bad = parse_odds_body(body, odds, 100);
  if (bad.empty() ? odds.ids.size() > 101 : bad.rfind("Invalid body: ", 0) != 0) std::abort();
  RdstnRequest req;
  std::string error;
  if (parse_rdstn(body, req, error)) {
    if (!req.doc.IsArray() || req.doc.Size() > 50 || !error.empty()) std::abort();
  } else if (error.empty()) {
    std::abort();
  }
  return 0;
}
