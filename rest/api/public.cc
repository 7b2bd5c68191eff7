// The routes without a key: /healthz for load balancers (nothing about the
// data), the settlement policy document, the OpenAPI contract, the
// explorer page, which carries the origin-locked demo key, and the stream
// module the pages import (a static file: any page may import it).
#include "protocol/api/errors.h"
#include "protocol/clock.h"
#include "rest/api/handlers.h"
#include "rest/embedded_files.h"

namespace oddsrelay::rest::routes {

void healthz(Call& c) {
  const bool ready = c.api.ready();
  c.w.StartObject();
  c.w.Key("status");
  c.w.String(ready ? "ok" : "starting");
  c.w.Key("uptime");
  c.w.Int64((wall_ms() - c.api.inputs.started_ms) / 1000);
  // Still 200 while the upstream is away: the node serves its last state;
  // the body tells a balancer that prefers fresh nodes.
  c.w.Key("upstream_ready");
  c.w.Bool(ready && c.api.inputs.upstream_ready && c.api.inputs.upstream_ready());
  c.w.EndObject();
  c.send(ready ? 200 : 503);
}

void settlement_policy(Call& c) { c.send_raw(200, "text/markdown; charset=utf-8", rest::settlement_policy()); }

void openapi(Call& c) { c.send_raw(200, "application/json", openapi_document()); }

void oddsclient_module(Call& c) {
  c.send_raw(200, "text/javascript; charset=utf-8", rest::oddsclient_module(), "Cache-Control: no-cache\r\n");
}

void explorer(Call& c) {
  auto ev = c.param("event");
  if (!ev || ev->empty()) return c.error(400, err::kMissingEvent);
  std::string page(explorer_page());
  if (size_t at = page.find("__DEMO_KEY__"); at != std::string::npos) page.replace(at, 12, c.api.explorer_key);
  c.send_page(page);
}

}  // namespace oddsrelay::rest::routes
