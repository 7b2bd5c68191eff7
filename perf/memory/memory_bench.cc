// Memory of the engine state: 10,000 events x 40 markets x 4 lines x 3
// outcomes (4.8 M outcomes) applied through the engine, reporting RSS growth
// and bytes per outcome. The baseline is measured in the same run: the same
// market records kept as parsed (id, price, flags per outcome, line keys) in
// a plain mutable two-level hash map, event -> market -> record, the
// container apply_bench's baseline uses. It is built while the engine state
// is still alive, so neither reuses memory the other freed. Nothing is
// printed as a ratio unless both hold every outcome and both grew the RSS.
// RSS is read after jemalloc returned the pages of freed memory
// (perf::rss_in_use_bytes): the engine's batches churn memory the plain
// map never allocates, and which of it jemalloc still holds at the moment
// of reading moved the figure by about 1 B/outcome between builds.
// Exits 1 on a failed check or when the goal (< 120 B/outcome) is missed.
//   build/perf/bench_memory [events markets lines outcomes]
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unordered_map>

#include "engine/core/engine.h"
#include "perf/perf_util.h"

using namespace oddsrelay;

namespace {

feed::Record market_record(uint32_t ev, uint32_t m, uint32_t lines, uint32_t outcomes) {
  feed::Record r;
  r.at = 1767225600000 + ev;
  r.id = "s7-101.";
  r.id += std::to_string(1000000 + ev);
  r.number = 1000000 + ev;
  feed::MarketRec mr;
  mr.market = 1001 + m;
  for (uint32_t l = 0; l < lines; ++l) {
    feed::LineIn li;
    li.key = "s";
    li.key.append(std::to_string(l)).append(".5");
    li.first = static_cast<uint32_t>(mr.outcomes.size());
    li.count = outcomes;
    for (uint32_t o = 0; o < outcomes; ++o) mr.outcomes.push_back({2001 + o, static_cast<int32_t>(150 + o + l), 0});
    mr.lines.push_back(std::move(li));
  }
  r.body = std::move(mr);
  return r;
}

constexpr const char* kUsage =
    "usage: bench_memory [events markets lines outcomes]\n"
    "  Applies events x markets x lines x outcomes through the engine and\n"
    "  reports the RSS per outcome against a plain map of the same records.\n"
    "  Defaults: 10000 40 4 3. Exits 1 on a failed check or a missed goal.\n";

int fail(const char* why) {
  std::fprintf(stderr, "bench_memory: FAILED: %s\n", why);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  uint32_t events = 10000, markets = 40, lines = 4, outcomes = 3;
  perf::check_args(argc, argv, {0, 4}, kUsage);
  if (argc == 5) {
    events = static_cast<uint32_t>(perf::integer_arg(argv[1], "events", "bench_memory"));
    markets = static_cast<uint32_t>(perf::integer_arg(argv[2], "markets", "bench_memory"));
    lines = static_cast<uint32_t>(perf::integer_arg(argv[3], "lines", "bench_memory"));
    outcomes = static_cast<uint32_t>(perf::integer_arg(argv[4], "outcomes", "bench_memory"));
  }
  const uint64_t want = uint64_t{events} * markets * lines * outcomes;

  const uint64_t rss0 = perf::rss_in_use_bytes();
  Engine e;
  uint64_t n = 0;
  for (uint32_t ev = 1; ev <= events; ++ev)
    for (uint32_t m = 0; m < markets; ++m) {
      e.apply(market_record(ev, m, lines, outcomes));
      if (++n % 256 == 0) e.commit();
    }
  e.commit();
  const uint64_t rss1 = perf::rss_in_use_bytes();

  std::unordered_map<uint64_t, std::unordered_map<uint32_t, feed::MarketRec>> plain;
  for (uint32_t ev = 1; ev <= events; ++ev)
    for (uint32_t m = 0; m < markets; ++m) {
      feed::Record r = market_record(ev, m, lines, outcomes);
      auto& mr = std::get<feed::MarketRec>(r.body);
      plain[r.number][mr.market] = std::move(mr);
    }
  const uint64_t rss2 = perf::rss_in_use_bytes();

  SnapshotPtr s = e.current();
  uint64_t plain_outcomes = 0, plain_markets = 0;
  for (const auto& [ev, ms] : plain)
    for (const auto& [id, mr] : ms) {
      plain_outcomes += mr.outcomes.size();
      ++plain_markets;
    }
  std::printf("state: %u events x %u markets x %u lines x %u outcomes = %" PRIu64 " outcomes, %" PRIu64 " markets\n",
              events, markets, lines, outcomes, s->outcomes, s->markets);
  if (s->outcomes != want || s->markets != uint64_t{events} * markets)
    return fail("the engine does not hold every outcome");
  if (plain_outcomes != want || plain_markets != s->markets) return fail("the baseline does not hold every outcome");
  if (rss0 == 0) return fail("no RSS reading (/proc/self/statm unreadable?)");
  // RSS grows by pages and allocator chunks: a few MiB at least, or the figure is noise.
  constexpr uint64_t kMeasurable = 4 << 20;
  if (rss1 < rss0 + kMeasurable || rss2 < rss1 + kMeasurable) return fail("too small to measure: use more events");

  const double per = static_cast<double>(rss1 - rss0) / static_cast<double>(want);
  const double base = static_cast<double>(rss2 - rss1) / static_cast<double>(want);
  std::printf("rss: start %.1f MiB, engine state +%.1f MiB, plain map +%.1f MiB\n", rss0 / 1048576.0,
              (rss1 - rss0) / 1048576.0, (rss2 - rss1) / 1048576.0);
  std::printf("bytes per outcome: engine %.1f (goal < 120), plain map baseline %.1f\n", per, base);
  std::printf("ratio engine / plain map: %.2fx\n", per / base);
  return per < 120 ? 0 : 1;
}
