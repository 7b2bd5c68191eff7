// Memory of the engine state: 10,000 events x 40 markets x 4 lines x 3
// outcomes (4.8 M outcomes) applied through the engine, reporting RSS growth
// and bytes per outcome, next to the bare payload (price, flags, ts and id:
// 20 bytes an outcome) as the baseline.
//   build/perf/bench_memory [events markets lines outcomes]
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "engine/engine.h"
#include "perf/perf_util.h"

using namespace oddsrelay;

int main(int argc, char** argv) {
  uint32_t events = 10000, markets = 40, lines = 4, outcomes = 3;
  if (argc == 5) {
    events = static_cast<uint32_t>(std::atoi(argv[1]));
    markets = static_cast<uint32_t>(std::atoi(argv[2]));
    lines = static_cast<uint32_t>(std::atoi(argv[3]));
    outcomes = static_cast<uint32_t>(std::atoi(argv[4]));
  }
  const uint64_t rss0 = perf::rss_bytes();
  Engine e;
  uint64_t n = 0;
  for (uint32_t ev = 1; ev <= events; ++ev) {
    for (uint32_t m = 0; m < markets; ++m) {
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
        for (uint32_t o = 0; o < outcomes; ++o)
          mr.outcomes.push_back({2001 + o, static_cast<int32_t>(150 + o + l), 0});
        mr.lines.push_back(std::move(li));
      }
      r.body = std::move(mr);
      e.apply(std::move(r));
      if (++n % 256 == 0) e.commit();
    }
  }
  e.commit();
  const uint64_t rss1 = perf::rss_bytes();
  SnapshotPtr s = e.current();
  const double per = static_cast<double>(rss1 - rss0) / static_cast<double>(s->outcomes);
  std::printf("state: %u events x %u markets x %u lines x %u outcomes = %" PRIu64 " outcomes, %" PRIu64 " markets\n",
              events, markets, lines, outcomes, s->outcomes, s->markets);
  std::printf("rss: before %.1f MiB, after %.1f MiB, state %.1f MiB\n", rss0 / 1048576.0, rss1 / 1048576.0,
              (rss1 - rss0) / 1048576.0);
  std::printf("bytes per outcome: %.1f (goal < 120)\n", per);
  std::printf("ratio to bare payload (20 B/outcome): %.2fx\n", per / 20.0);
  return per < 120 ? 0 : 1;
}
