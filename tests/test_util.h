// Helpers shared by the unit tests: records built in code, temp files,
// simulated feeds, and state comparisons for the durability tests.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "engine/core/engine.h"
#include "protocol/feed_record.h"

namespace oddsrelay::test {

// Whether this build runs under a sanitizer, where each step costs 10-20x:
// a test that repeats one check many times for breadth does fewer
// repeats there, since what that build checks is memory and races.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

// One record parsed from a feed-format line; fails the test if it does not parse.
feed::Record rec(const std::string& line);

// A market record: lines as {key, s, {{outcome, price, flags}...}}.
struct L {
  std::string key;
  int s;
  std::vector<std::array<int, 3>> o;
};
feed::Record market(int64_t at, const std::string& id, uint32_t market, const std::vector<L>& lines);
feed::Record event(int64_t at, const std::string& id, int sport, bool live);

void apply_all(Engine& e, std::vector<feed::Record> recs);

// A fresh directory under the system temp dir, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// The voluntary context switches so far of this process's thread named
// `name` (each one a sleep it went into, /proc/self/task/*/status), or -1
// when no thread has that name: how often a thread woke, for tests of
// threads that should sleep until they have work.
long voluntary_switches(const std::string& thread_name);

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& data);

// For durability tests, which must compare more than the state digest (a
// broken digest would make every state look equal):
// The first line where two multi-line texts (e.g. dump_state outputs)
// differ, as "line N: <a> | <b>"; empty when they are equal.
std::string first_diff(const std::string& a, const std::string& b);
// Counts and sums read straight off the snapshot's fields, without
// dump_state: events, listings, markets, outcomes, prices and timestamps,
// scores, settlement anchors, timelines, odds at the end and stats.
std::string state_summary(const Snapshot& s);
// Equal by digest, by dump_state text and by state_summary; the failure
// message says which measure differs and where.
::testing::AssertionResult same_state(const Snapshot& a, const Snapshot& b);

// The first `n` records of the simulator (virtual time from 1'000'000 ms),
// `events` fixtures at 1,000 records/s, `minute_ms` virtual ms a minute.
std::vector<feed::Record> sim_records(size_t n, uint64_t seed = 11, uint32_t events = 60, int64_t minute_ms = 200);
// Sends `requests` on one loopback connection to `port` and reads until the
// server closes it (a 10 s deadline fails the test only if it never does).
std::string exchange(uint16_t port, const std::string& requests);
// A feed file replayed into a fresh engine (its first `limit` records),
// committing every 256 records like `oddsfeed digest`; the number of
// records read is stored in `*records` when given. Fails the test on a
// file that cannot be opened or has malformed lines.
SnapshotPtr replay_file(const std::string& path, size_t limit = std::numeric_limits<size_t>::max(),
                        size_t* records = nullptr);

}  // namespace oddsrelay::test
