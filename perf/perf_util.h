// Inputs shared by the benchmarks: simulator records, and the RSS probe.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "protocol/feed_record.h"

namespace oddsrelay::perf {

// The first `n` market records of a simulator run (parsed deltas, as the
// engine receives them), plus the records that set up their events.
struct SimFeed {
  std::vector<feed::Record> setup;    // everything before the first odds step
  std::vector<feed::Record> markets;  // n market records
};
SimFeed sim_market_records(size_t n, uint32_t events = 2000, uint64_t seed = 1);

// Resident set size of this process, bytes.
uint64_t rss_bytes();
// The same after the allocator returned the pages it keeps from freed
// memory (jemalloc keeps them 10 s by default): the memory in use, so
// that a figure measures what a structure holds, not how much garbage a
// run happened to churn just before (no-op without jemalloc).
uint64_t rss_in_use_bytes();

// How many records a kernel benchmark runs on: `full`, or the number in the
// environment variable ODDSRELAY_BENCH_RECORDS when set (perf/run.sh
// --quick runs every benchmark small; the checks stay the same).
size_t bench_records(size_t full);

// The command line of a benchmark that takes positional arguments: with
// --help or -h among them, `usage` goes to stdout and the process exits 0
// before it measures anything; with a count of arguments (argv[0] not
// counted) that is not one of `counts`, `usage` goes to stderr and it
// exits 2.
void check_args(int argc, char** argv, std::initializer_list<int> counts, const char* usage);
// A positional argument that must be an integer of at least `min`; exits 2
// naming `what` otherwise.
uint64_t integer_arg(const char* text, const char* what, const char* program, uint64_t min = 1);

}  // namespace oddsrelay::perf
