// The status line's reason phrase: every status the server sends, and every
// other one of RFC 9110, has its registered phrase, never "Unknown".
#include "protocol/http_response.h"

#include <gtest/gtest.h>

#include <string>

namespace oddsrelay::http {
namespace {

TEST(HttpResponse, ReasonPhrasesAreTheRegisteredOnes) {
  // What rest/ and relay/ answer with, including the upgrade refusal.
  const std::pair<int, const char*> table[] = {
      {101, "Switching Protocols"},
      {200, "OK"},
      {204, "No Content"},
      {304, "Not Modified"},
      {400, "Bad Request"},
      {401, "Unauthorized"},
      {403, "Forbidden"},
      {404, "Not Found"},
      {405, "Method Not Allowed"},
      {408, "Request Timeout"},
      {411, "Length Required"},
      {412, "Precondition Failed"},
      {413, "Content Too Large"},
      {414, "URI Too Long"},
      {426, "Upgrade Required"},
      {429, "Too Many Requests"},
      {431, "Request Header Fields Too Large"},
      {500, "Internal Server Error"},
      {501, "Not Implemented"},
      {503, "Service Unavailable"},
      {505, "HTTP Version Not Supported"},
  };
  for (const auto& [status, phrase] : table) EXPECT_STREQ(reason(status), phrase) << status;
}

TEST(HttpResponse, EveryStandardStatusHasAPhrase) {
  for (int s : {100, 201, 202, 203, 205, 206, 300, 301, 302, 303, 307, 308, 402,
                406, 407, 409, 410, 415, 416, 417, 421, 422, 428, 502, 504, 511})
    EXPECT_STRNE(reason(s), "Unknown") << s;
  EXPECT_STREQ(reason(299), "Unknown");
}

TEST(HttpResponse, StatusLineCarriesThePhrase) {
  std::string out;
  ResponseHead h;
  h.status = 426;
  append_response(out, h, "{}");
  EXPECT_EQ(out.rfind("HTTP/1.1 426 Upgrade Required\r\n", 0), 0u) << out;
}

}  // namespace
}  // namespace oddsrelay::http
