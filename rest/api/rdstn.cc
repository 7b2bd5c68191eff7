// POST /rdstn, the legacy event-list format (rest/rdstn.h parses and
// answers it): the body is validated before the permission check, since
// what each command's answer carries decides the permissions it needs.
#include "protocol/api/errors.h"
#include "rest/api/handlers.h"

namespace oddsrelay::rest::routes {

// A body that does not validate declares nothing more and is answered 400.
void declare_rdstn(Call& c, Needs& n) {
  c.rdstn.emplace();
  if (parse_rdstn(c.req.body, *c.rdstn, c.rdstn_error))
    rdstn_needs(*c.rdstn, *c.snap, n);
  else if (c.rdstn_error.empty())
    c.rdstn_error = "Invalid body";
}

void rdstn(Call& c) {
  if (!c.rdstn_error.empty()) return c.error(400, c.rdstn_error);
  if (!write_rdstn(*c.rdstn, *c.snap, c.body)) return c.error(400, err::kRdstnAnswerTooLarge);
  c.send(200);
}

}  // namespace oddsrelay::rest::routes
