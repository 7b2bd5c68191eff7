// docs/settlement.md, built into the binary and served at /docs/settlement
// (the settlement response's policy_url), so the rules a desk reconciles
// against are the ones this build implements.
#pragma once

#include <string_view>

namespace oddsrelay::rest {

std::string_view settlement_policy();

}  // namespace oddsrelay::rest
