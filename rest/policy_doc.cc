#include "rest/policy_doc.h"

#define ODDSRELAY_STR2(x) #x
#define ODDSRELAY_STR(x) ODDSRELAY_STR2(x)

// See engine/catalog_data.cc for the technique.
__asm__(".section .rodata\n"
        ".global oddsrelay_policy_begin\n"
        "oddsrelay_policy_begin:\n"
        ".incbin \"" ODDSRELAY_STR(ODDSRELAY_POLICY_PATH) "\"\n"
        ".global oddsrelay_policy_end\n"
        "oddsrelay_policy_end:\n"
        ".byte 0\n"
        ".previous\n");

extern "C" const char oddsrelay_policy_begin[];
extern "C" const char oddsrelay_policy_end[];

namespace oddsrelay::rest {

std::string_view settlement_policy() {
  return std::string_view(oddsrelay_policy_begin, static_cast<size_t>(oddsrelay_policy_end - oddsrelay_policy_begin));
}

}  // namespace oddsrelay::rest
