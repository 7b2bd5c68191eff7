// jemalloc settings for the binaries that link it (see CMakeLists.txt).
// The engine frees and reallocates the same small sizes continuously; keep
// freed pages for 10 s instead of returning them to the kernel at once, which
// otherwise shows up as page faults on the apply path (perf/apply).
extern "C" {
const char* malloc_conf = "dirty_decay_ms:10000,muzzy_decay_ms:10000";
}
