// Files built into the binary and served as they are: the settlement
// policy (docs/settlement.md, the settlements' policy_url), the two
// self-contained pages (rest/pages/): the widget and the explorer, the
// stream module both import (rest/pages/oddsclient.mjs), and the OpenAPI contract (docs/openapi.yaml, as JSON). Built
// in, so what a build serves is what it was built from.
#pragma once

#include <string_view>

namespace oddsrelay::rest {

std::string_view settlement_policy();
std::string_view widget_page();
std::string_view explorer_page();
std::string_view oddsclient_module();
std::string_view openapi_document();

}  // namespace oddsrelay::rest
