// The REST layer speaks the interface's vocabulary unqualified: the keys,
// permissions, errors and stream ticket of protocol/api (namespace `api`)
// and the snapshot's JSON shapes of engine/views (namespace `views`). Those
// live below REST, which every output shares; REST's own names (the server,
// the router, the route handlers in `rest::routes`) stay in `rest`. Included
// by each REST header, so a handler reads `ApiKey`, `err::kNotFound` and
// `write_market` as it always has.
#pragma once

namespace oddsrelay::api {}
namespace oddsrelay::views {}

namespace oddsrelay::rest {
using namespace oddsrelay::api;
using namespace oddsrelay::views;
}  // namespace oddsrelay::rest
