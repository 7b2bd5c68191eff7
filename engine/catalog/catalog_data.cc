// data/catalog.json inside the binary, so oddsrelay runs from anywhere
// without a data directory. The assembler includes the file's bytes
// (ODDSRELAY_CATALOG_PATH comes from CMake, which also rebuilds this
// object when the file changes); a NUL follows so it can be parsed in place.
#include <string_view>

#include "engine/catalog/catalog.h"

#define ODDSRELAY_STR2(x) #x
#define ODDSRELAY_STR(x) ODDSRELAY_STR2(x)

__asm__(".section .rodata\n"
        ".global oddsrelay_catalog_begin\n"
        ".type oddsrelay_catalog_begin, @object\n"
        "oddsrelay_catalog_begin:\n"
        ".incbin \"" ODDSRELAY_STR(ODDSRELAY_CATALOG_PATH) "\"\n"
        ".global oddsrelay_catalog_end\n"
        ".type oddsrelay_catalog_end, @object\n"
        "oddsrelay_catalog_end:\n"
        ".byte 0\n"
        ".previous\n");

extern "C" const char oddsrelay_catalog_begin[];
extern "C" const char oddsrelay_catalog_end[];

namespace oddsrelay {

std::shared_ptr<const Catalog> Catalog::builtin() {
  static const std::shared_ptr<const Catalog> c = parse(
      std::string_view(oddsrelay_catalog_begin, static_cast<size_t>(oddsrelay_catalog_end - oddsrelay_catalog_begin)));
  return c;
}

}  // namespace oddsrelay
