// What the line history (engine/core/line_history.h) costs and what it buys, on
// the simulator's own book: the simulator runs on virtual time through a
// real engine until its fixtures have played out; for every fixture whose
// whole life was seen (pre-match, kick-off, full time) it reports the lines
// priced, the lines settled now, and the lines the odds at full time alone
// would settle (the settlement before the history existed). Memory is the
// history's heap payload per ended event, counted from its structures
// (allocator rounding adds ~10%), next to the event's served odds.
//   build/perf/bench_line_history [seed events rate minute_ms virtual_minutes]
//   defaults: 1 300 200 4000 40 (the --feed sim defaults, 40 minutes)
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/catalog/catalog.h"
#include "engine/core/engine.h"
#include "engine/settlement/settlement.h"
#include "engine/sources/simulator.h"
#include "perf/perf_util.h"

using namespace oddsrelay;

namespace {

struct Seen {
  int32_t sport = 0;
  bool opened_prematch = false;  // first seen as pre-match: its whole book was observed
  bool kicked_off = false;
  bool ended = false;
  std::set<std::string> before_ko, priced;  // "market/line" priced before kick-off; before full time
};

// One make_shared allocation: control block + object (+ a Market's tail).
constexpr size_t kControlBlock = 16;

size_t market_payload(const Market& m) {
  return kControlBlock + sizeof(Market) + m.lines.size() * sizeof(Line) + m.outcomes.size() * sizeof(Outcome);
}

size_t history_payload(const LineHistory& h) {
  // Packed once its event has ended (engine/core/packed_lines.h).
  size_t b = kControlBlock + sizeof(LineHistory) + h.markets.capacity() * sizeof(MarketRef) + h.packed.capacity();
  for (const MarketRef& m : h.markets) b += market_payload(*m);
  return b;
}

std::string line_id(uint32_t market, std::string_view key) { return std::to_string(market) + "/" + std::string(key); }

constexpr const char* kUsage =
    "usage: bench_line_history [seed events rate minute_ms virtual_minutes]\n"
    "  Runs the simulator on virtual time through an engine and reports, per\n"
    "  fixture seen from pre-match to full time, the lines priced and settled\n"
    "  and the line history's bytes. Defaults: 1 300 200 4000 40.\n";

}  // namespace

int main(int argc, char** argv) {
  sim::SimOptions o;
  int64_t minutes = 40;
  perf::check_args(argc, argv, {0, 5}, kUsage);
  if (argc == 6) {
    o.seed = perf::integer_arg(argv[1], "seed", "bench_line_history", 0);
    o.events = static_cast<uint32_t>(perf::integer_arg(argv[2], "events", "bench_line_history"));
    o.rate = static_cast<double>(perf::integer_arg(argv[3], "rate", "bench_line_history"));
    o.minute_ms = static_cast<int64_t>(perf::integer_arg(argv[4], "minute_ms", "bench_line_history"));
    minutes = static_cast<int64_t>(perf::integer_arg(argv[5], "virtual_minutes", "bench_line_history"));
  }
  std::printf("command: bench_line_history %" PRIu64 " %u %.0f %" PRId64 " %" PRId64 "\n", o.seed, o.events, o.rate,
              o.minute_ms, minutes);
  const int64_t start = 1767225600000;
  sim::Simulator sim(o);
  Engine engine;
  std::map<uint64_t, Seen> seen;
  std::vector<feed::Record> recs;
  sim.open(start, start, recs);
  uint64_t applied = 0;
  while (sim.now() < start + minutes * 60'000) {
    for (feed::Record& r : recs) {
      Seen& s = seen[r.number];
      switch (r.op()) {
        case feed::Op::Event: {
          const auto& ev = *std::get<std::shared_ptr<const feed::EventObject>>(r.body);
          if (s.sport == 0) s.opened_prematch = !ev.live;
          s.sport = ev.sport;
          s.kicked_off |= ev.live;
          break;
        }
        case feed::Op::Market:
          if (!s.ended)
            for (const feed::LineIn& l : std::get<feed::MarketRec>(r.body).lines)
              if (l.count > 0) {
                const std::string id = line_id(std::get<feed::MarketRec>(r.body).market, l.key);
                s.priced.insert(id);
                if (!s.kicked_off) s.before_ko.insert(id);
              }
          break;
        case feed::Op::Score:
          s.ended |= r.score().status == feed::ScoreStatus::Ended;
          break;
        default:
          break;
      }
      engine.apply(std::move(r));
      if (++applied % 256 == 0) engine.commit();
    }
    recs.clear();
    sim.step(sim.now() + static_cast<int64_t>(sim.step_ms()), recs);
  }
  engine.commit();
  SnapshotPtr snap = engine.current();
  const Catalog& catalog = *Catalog::builtin();

  struct Totals {
    uint64_t events = 0, priced = 0, settled = 0, settled_before = 0;
    uint64_t ko = 0, ko_settled = 0, ko_settled_before = 0;
    uint64_t history_lines = 0, history_bytes = 0, history_max = 0, odds_bytes = 0, dropped = 0;
  };
  std::map<int32_t, Totals> by_sport;
  std::printf("\nsoccer fixtures seen from pre-match to full time (first 8):\n");
  std::printf("  %-18s %8s %8s %8s | %10s %10s %10s | %9s\n", "event", "priced", "settled", "before", "pre-KO",
              "KO settled", "KO before", "hist B");
  int shown = 0;
  for (const auto& [number, s] : seen) {
    if (!s.opened_prematch || !s.ended) continue;
    const EventEntry* e = snap->events.find(number);
    if (!e || !e->score || !e->score->ended) continue;
    std::set<std::string> settled, before;
    for (const MarketSettlement& m : settle(*e, catalog, false).markets)
      for (const LineSettlement& l : m.lines) settled.insert(line_id(m.market, l.key));
    for (const MarketRef& m : e->score->odds_at_end)
      for (const Line& l : m->lines)
        if (l.count > 0) before.insert(line_id(m.id, l.key.view()));
    auto count_in = [](const std::set<std::string>& of, const std::set<std::string>& in) {
      return static_cast<uint64_t>(
          std::count_if(of.begin(), of.end(), [&](const std::string& x) { return in.count(x); }));
    };
    Totals& t = by_sport[s.sport];
    ++t.events;
    t.priced += s.priced.size();
    t.settled += count_in(s.priced, settled);
    t.settled_before += count_in(s.priced, before);
    t.ko += s.before_ko.size();
    t.ko_settled += count_in(s.before_ko, settled);
    t.ko_settled_before += count_in(s.before_ko, before);
    const size_t hb = e->history ? history_payload(*e->history) : 0;
    t.history_bytes += hb;
    t.history_max = std::max<uint64_t>(t.history_max, hb);
    t.history_lines += e->history ? e->history->lines : 0;
    t.dropped += e->history ? e->history->dropped : 0;
    for (const MarketRef& m : e->score->odds_at_end) t.odds_bytes += market_payload(*m);
    if (s.sport == 1 && shown < 8) {
      ++shown;
      std::printf("  %-18s %8zu %8" PRIu64 " %8" PRIu64 " | %10zu %10" PRIu64 " %10" PRIu64 " | %9zu\n", e->key.c_str(),
                  s.priced.size(), count_in(s.priced, settled), count_in(s.priced, before), s.before_ko.size(),
                  count_in(s.before_ko, settled), count_in(s.before_ko, before), hb);
    }
  }
  std::printf("\nper sport, fixtures seen from pre-match to full time:\n");
  std::printf("  %5s %6s | %8s %8s %8s | %8s %10s %10s | %10s %10s %10s %8s\n", "sport", "events", "priced", "settled",
              "before", "pre-KO", "KO settled", "KO before", "hist lines", "hist B/ev", "hist max B", "odds B/ev");
  Totals all;
  bool ok = true;
  for (const auto& [sport, t] : by_sport) {
    std::printf("  %5d %6" PRIu64 " | %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " | %8" PRIu64 " %10" PRIu64 " %10" PRIu64
                " | %10.1f %10.0f %10" PRIu64 " %8.0f\n",
                sport, t.events, t.priced, t.settled, t.settled_before, t.ko, t.ko_settled, t.ko_settled_before,
                static_cast<double>(t.history_lines) / t.events, static_cast<double>(t.history_bytes) / t.events,
                t.history_max, static_cast<double>(t.odds_bytes) / t.events);
    all.events += t.events;
    all.priced += t.priced;
    all.settled += t.settled;
    all.history_bytes += t.history_bytes;
    all.dropped += t.dropped;
    all.history_max = std::max(all.history_max, t.history_max);
    ok &= t.settled == t.priced;
  }
  if (all.events == 0) {
    std::printf("no fixture played out: run longer\n");
    return 1;
  }
  std::printf("\nall sports: %" PRIu64 " fixtures, lines priced %" PRIu64 ", settled %" PRIu64
              " (%.1f%%); history %.0f B per ended event (max %" PRIu64 " B), %" PRIu64 " lines dropped at the bound\n",
              all.events, all.priced, all.settled, 100.0 * static_cast<double>(all.settled) / all.priced,
              static_cast<double>(all.history_bytes) / all.events, all.history_max, all.dropped);
  std::printf("goal: every line priced before full time is settled: %s\n", ok ? "yes" : "NO");
  return ok ? 0 : 1;
}
