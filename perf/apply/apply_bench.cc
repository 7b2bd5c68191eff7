// Engine apply throughput: parsed `market` records applied on one core with
// a snapshot published every 256 records (the pipeline's batch_max, what a
// live feed's bursts get), every 16384 (issue 38's yardstick, the catch-up
// batch until 2026-12) and every 65536 (Pipeline::kCatchUpBatch, what a
// replay at max speed or an edge catching up gets), against a
// baseline that applies the same records to a plain mutable hash map with
// no snapshots: the ratio is what immutability costs. A floor between the
// two builds each served market as the engine does, in the same mutable
// map: the engine against it is what persistence, change sets, the line
// history and retention cost; the map against it, the market's own work.
// Each run checks its work: the engine applied every record and skipped
// none, the map and the floor hold every distinct (event, market) of the
// records; otherwise it exits 1 instead of reporting a rate.
//   build/perf/bench_apply
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <unordered_map>

#include "engine/core/engine.h"
#include "engine/core/pipeline.h"
#include "engine/core/reclaimer.h"
#include "perf/perf_util.h"

namespace {

const size_t kRecords = oddsrelay::perf::bench_records(1'000'000);

void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "bench_apply: FAILED: %s\n", what);
  std::exit(1);
}

const oddsrelay::perf::SimFeed& feed() {
  static oddsrelay::perf::SimFeed f = oddsrelay::perf::sim_market_records(kRecords);
  return f;
}

size_t distinct_markets() {
  static size_t n = [] {
    std::unordered_map<uint64_t, std::unordered_map<uint32_t, bool>> seen;
    for (const auto& r : feed().markets) seen[r.number][std::get<oddsrelay::feed::MarketRec>(r.body).market] = true;
    size_t k = 0;
    for (const auto& [ev, ms] : seen) k += ms.size();
    return k;
  }();
  return n;
}

void BM_EngineApplyMarkets(benchmark::State& state) {
  const auto& f = feed();
  const size_t batch = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    state.PauseTiming();
    oddsrelay::Engine e;
    // The server's applying thread never frees a batch: Pipeline::run hands
    // each to the log thread, and the last stage to hold it frees its
    // records. So does this bench, as the floor frees its records outside
    // the timing ("freeing is not applying").
    oddsrelay::Reclaimer consumer;
    for (const auto& r : f.setup) e.apply(oddsrelay::feed::Record(r));
    e.commit();
    std::vector<oddsrelay::feed::Record> recs = f.markets;
    state.ResumeTiming();
    size_t n = 0;
    for (auto& r : recs) {
      e.apply(std::move(r));
      if (++n % batch == 0) consumer.retire(e.commit());
    }
    consumer.retire(e.commit());
    benchmark::DoNotOptimize(e.current()->markets);
    state.PauseTiming();
    check(e.applied() == f.setup.size() + f.markets.size() && e.skipped() == 0,
          "the engine did not apply every record");
    recs.clear();  // freeing is not applying
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * f.markets.size()));
}
BENCHMARK(BM_EngineApplyMarkets)
    ->ArgName("batch")
    ->Arg(256)
    ->Arg(16384)
    ->Arg(oddsrelay::Pipeline::kCatchUpBatch)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();

// Baseline: the same work minus persistence (in-place replacement of a
// market in a mutable two-level hash map, no ts carry-over, no publish).
void BM_BaselineMutableMap(benchmark::State& state) {
  const auto& f = feed();
  for (auto _ : state) {
    state.PauseTiming();
    std::unordered_map<uint64_t, std::unordered_map<uint32_t, oddsrelay::feed::MarketRec>> m;
    std::vector<oddsrelay::feed::Record> recs = f.markets;
    state.ResumeTiming();
    for (auto& r : recs) {
      auto& mr = std::get<oddsrelay::feed::MarketRec>(r.body);
      m[r.number][mr.market] = std::move(mr);
    }
    benchmark::DoNotOptimize(m.size());
    state.PauseTiming();
    size_t held = 0;
    for (const auto& [ev, ms] : m) held += ms.size();
    check(held == distinct_markets(), "the baseline does not hold every market");
    recs.clear();
    m.clear();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * f.markets.size()));
}
BENCHMARK(BM_BaselineMutableMap)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();

// Floor: the market work every record needs, without persistence. Each
// record's market is built exactly as the engine builds it (build_market:
// a new block, each outcome's ts and previous price carried over from the
// market it replaces, which is read) and replaces that market in place in
// a mutable map. No snapshot, change set, line history or retention: the
// engine's rate over this one is what those cost, and the map baseline's
// over this one what the served market's own fields cost.
void BM_FloorBuildMarkets(benchmark::State& state) {
  const auto& f = feed();
  for (auto _ : state) {
    state.PauseTiming();
    std::unordered_map<uint64_t, std::unordered_map<uint32_t, oddsrelay::MarketPtr>> m;
    std::vector<oddsrelay::feed::Record> recs = f.markets;
    state.ResumeTiming();
    for (auto& r : recs) {
      auto& mr = std::get<oddsrelay::feed::MarketRec>(r.body);
      auto& slot = m[r.number][mr.market];
      slot = oddsrelay::build_market(mr, slot.get(), r.at, r.number);
    }
    benchmark::DoNotOptimize(m.size());
    state.PauseTiming();
    size_t held = 0;
    for (const auto& [ev, ms] : m) held += ms.size();
    check(held == distinct_markets(), "the floor does not hold every market");
    recs.clear();
    m.clear();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * f.markets.size()));
}
BENCHMARK(BM_FloorBuildMarkets)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();

}  // namespace
