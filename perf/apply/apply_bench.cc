// Engine apply throughput: parsed `market` records applied on one core with
// a snapshot published every 256 records (the pipeline's batch), against a
// baseline that applies the same records to a plain mutable hash map with
// no snapshots: the ratio is what immutability costs.
//   build/perf/bench_apply
#include <benchmark/benchmark.h>

#include <unordered_map>

#include "engine/engine.h"
#include "perf/perf_util.h"

namespace {

constexpr size_t kRecords = 1'000'000;

const oddsrelay::perf::SimFeed& feed() {
  static oddsrelay::perf::SimFeed f = oddsrelay::perf::sim_market_records(kRecords);
  return f;
}

void BM_EngineApplyMarkets(benchmark::State& state) {
  const auto& f = feed();
  for (auto _ : state) {
    state.PauseTiming();
    oddsrelay::Engine e;
    for (const auto& r : f.setup) e.apply(oddsrelay::feed::Record(r));
    e.commit();
    std::vector<oddsrelay::feed::Record> recs = f.markets;
    state.ResumeTiming();
    size_t n = 0;
    for (auto& r : recs) {
      e.apply(std::move(r));
      if (++n % 256 == 0) e.commit();
    }
    e.commit();
    benchmark::DoNotOptimize(e.current()->markets);
    state.PauseTiming();
    recs.clear();  // freeing is not applying
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * f.markets.size()));
}
BENCHMARK(BM_EngineApplyMarkets)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();

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
    recs.clear();
    m.clear();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * f.markets.size()));
}
BENCHMARK(BM_BaselineMutableMap)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();

}  // namespace
