#include "protocol/api/access.h"

namespace oddsrelay::api {

std::string refusal(uint32_t missing_permissions) {
  std::string names;
  for (Permission p : {kPermLive, kPermPrematch, kPermOdds, kPermScores, kPermWidget, kPermStream})
    if (missing_permissions & p) {
      if (!names.empty()) names += "' or '";
      names += permission_name(p);
    }
  return "API key lacks the '" + names + "' permission";
}

}  // namespace oddsrelay::api
