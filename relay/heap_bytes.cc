// heap_bytes.h: jemalloc's size classes when it is linked, glibc's chunks
// otherwise.
#include "relay/heap_bytes.h"

#include <algorithm>

// Weak: null unless the process links jemalloc (the relay library is also
// linked into tests and sanitizer builds, which keep their own allocator).
extern "C" size_t nallocx(size_t size, int flags) __attribute__((weak));

namespace oddsrelay::relay {

size_t heap_block(size_t request) {
  if (request == 0) return 0;
  if (nallocx) return nallocx(request, 0);
  return std::max<size_t>(32, (request + 8 + 15) & ~size_t{15});
}

}  // namespace oddsrelay::relay
