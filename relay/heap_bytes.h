// What the allocator really hands out for a request, so that a bound on
// memory (the resume window, relay/resume_window.h) counts the heap it
// holds rather than its payload: size classes, chunk headers and growth
// slack included (docs/architecture.md, "The resume window's bytes").
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace oddsrelay::relay {

// The bytes of the heap block that serves a request of `request` bytes (0
// for 0): jemalloc's size class (nallocx) when the process runs on
// jemalloc (the oddsrelay binary); else glibc's chunk, the request plus its
// 8-byte header rounded up to 16, at least 32 (tests, sanitizer builds: a
// model, not the sanitizer's own layout).
size_t heap_block(size_t request);

// A string's heap block: its capacity, not its size; none while it fits in
// the string itself (libstdc++ keeps up to 15 characters inline).
inline size_t heap_string(const std::string& s) { return s.capacity() > 15 ? heap_block(s.capacity() + 1) : 0; }

template <class T>
size_t heap_vector(const std::vector<T>& v) {
  return heap_block(v.capacity() * sizeof(T));
}

}  // namespace oddsrelay::relay
