// GET /v1/sports: the sports held with their live and pre-match counts.
#include "protocol/sports.h"

#include "rest/api/handlers.h"

namespace oddsrelay::rest::routes {

void sports(Call& c) {
  c.begin_success();
  c.w.Key("data");
  c.w.StartArray();
  for (const SportCount& s : c.snap->sports) {
    c.w.StartObject();
    c.w.Key("id");
    c.w.Int(s.sport);
    c.w.Key("name");
    const char* name = sport_name(s.sport);
    c.w.String(name ? name : "Other");
    c.w.Key("live_count");
    c.w.Uint(s.live);
    c.w.Key("prematch_count");
    c.w.Uint(s.prematch);
    c.w.EndObject();
  }
  c.w.EndArray();
  c.w.EndObject();
  c.send(200);
}

}  // namespace oddsrelay::rest::routes
