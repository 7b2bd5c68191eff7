#include "perf/perf_util.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "engine/sources/simulator.h"

namespace oddsrelay::perf {

SimFeed sim_market_records(size_t n, uint32_t events, uint64_t seed) {
  SimFeed f;
  sim::Simulator s(sim::SimOptions{seed, events, 1000, 4000});
  s.open(1'767'225'600'000, 1'767'225'600'000, f.setup);
  std::vector<feed::Record> out;
  while (f.markets.size() < n) {
    s.step(s.now(), out);
    for (auto& r : out)
      if (r.op() == feed::Op::Market && f.markets.size() < n) f.markets.push_back(std::move(r));
    out.clear();
  }
  return f;
}

// Weak: null unless the binary links jemalloc.
extern "C" int mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen) __attribute__((weak));

uint64_t rss_in_use_bytes() {
  constexpr int kAllArenas = 4096;  // MALLCTL_ARENAS_ALL
  if (mallctl) mallctl(("arena." + std::to_string(kAllArenas) + ".purge").c_str(), nullptr, nullptr, nullptr, 0);
  return rss_bytes();
}

uint64_t rss_bytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long size = 0, resident = 0;
  int n = std::fscanf(f, "%lu %lu", &size, &resident);
  std::fclose(f);
  return n == 2 ? resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) : 0;
}

size_t bench_records(size_t full) {
  const char* v = std::getenv("ODDSRELAY_BENCH_RECORDS");
  if (!v || !*v) return full;
  char* end = nullptr;
  unsigned long long n = std::strtoull(v, &end, 10);
  if (*end != 0 || n == 0) {
    std::fprintf(stderr, "ODDSRELAY_BENCH_RECORDS=%s is not a positive number\n", v);
    std::exit(2);
  }
  return static_cast<size_t>(n);
}

void check_args(int argc, char** argv, std::initializer_list<int> counts, const char* usage) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(usage, stdout);
      std::exit(0);
    }
  if (std::find(counts.begin(), counts.end(), argc - 1) == counts.end()) {
    std::fputs(usage, stderr);
    std::exit(2);
  }
}

uint64_t integer_arg(const char* text, const char* what, const char* program, uint64_t min) {
  char* end = nullptr;
  const unsigned long long n = std::strtoull(text, &end, 10);
  if (*text == '-' || *end != 0 || end == text || n < min) {
    std::fprintf(stderr, "%s: bad %s '%s' (an integer, at least %llu; see --help)\n", program, what, text,
                 static_cast<unsigned long long>(min));
    std::exit(2);
  }
  return n;
}

}  // namespace oddsrelay::perf
