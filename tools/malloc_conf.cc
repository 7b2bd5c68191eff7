// jemalloc settings for the binaries that link it (see CMakeLists.txt).
// The engine frees and reallocates the same small sizes continuously; keep
// freed pages for 10 s instead of returning them to the kernel at once, which
// otherwise shows up as page faults on the apply path (perf/apply).
// oversize_threshold:0 keeps large allocations under the same rule: by
// default jemalloc serves those of 8 MiB or more from an arena of their own
// that returns their pages at once, and a catch-up batch's records (up to
// 65,536, engine/core/pipeline.h) are such an allocation, made again for
// every batch: a max-speed replay faulted about 30,000 pages back in, a
// third of its page faults (perf/PROFILE.md s37).
extern "C" {
const char* malloc_conf = "dirty_decay_ms:10000,muzzy_decay_ms:10000,oversize_threshold:0";
}
