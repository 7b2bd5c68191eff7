#include "rest/embedded_files.h"

#define ODDSRELAY_STR2(x) #x
#define ODDSRELAY_STR(x) ODDSRELAY_STR2(x)

// The assembler includes each file's bytes (paths from CMake, which also
// rebuilds this object when a file changes); see engine/catalog/catalog_data.cc.
#define ODDSRELAY_EMBED(name, path)             \
  __asm__(".section .rodata\n"                \
          ".global " #name "_begin\n" #name   \
          "_begin:\n"                         \
          ".incbin \"" ODDSRELAY_STR(path) "\"\n" \
          ".global " #name "_end\n" #name     \
          "_end:\n"                           \
          ".byte 0\n"                         \
          ".previous\n"); \
  extern "C" const char name##_begin[];         \
  extern "C" const char name##_end[];

ODDSRELAY_EMBED(oddsrelay_policy, ODDSRELAY_POLICY_PATH)
ODDSRELAY_EMBED(oddsrelay_widget, ODDSRELAY_WIDGET_PATH)
ODDSRELAY_EMBED(oddsrelay_explorer, ODDSRELAY_EXPLORER_PATH)
ODDSRELAY_EMBED(oddsrelay_oddsclient, ODDSRELAY_ODDSCLIENT_PATH)
ODDSRELAY_EMBED(oddsrelay_openapi, ODDSRELAY_OPENAPI_PATH)

namespace oddsrelay::rest {

namespace {
std::string_view span(const char* b, const char* e) { return std::string_view(b, static_cast<size_t>(e - b)); }
}  // namespace

std::string_view settlement_policy() { return span(oddsrelay_policy_begin, oddsrelay_policy_end); }
std::string_view widget_page() { return span(oddsrelay_widget_begin, oddsrelay_widget_end); }
std::string_view explorer_page() { return span(oddsrelay_explorer_begin, oddsrelay_explorer_end); }
std::string_view oddsclient_module() { return span(oddsrelay_oddsclient_begin, oddsrelay_oddsclient_end); }
std::string_view openapi_document() { return span(oddsrelay_openapi_begin, oddsrelay_openapi_end); }

}  // namespace oddsrelay::rest
