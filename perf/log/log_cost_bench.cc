// What the journal costs the engine: the same parsed market records pushed
// through the real Pipeline (engine thread, batches of 256) with and
// without the durable stage (LogWriter into a data dir under /tmp: every
// batch written before it is published, fdatasync every 200 ms, the
// default compaction; records pushed faster than the engine applies them
// are a catch-up's, compacted log_writer.h's catch_up_factor times less
// often). The ratio of the two rates is the figure; the baseline is
// measured in the same run.
//   build/perf/bench_log
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "engine/core/pipeline.h"
#include "engine/storage/data_dir.h"
#include "engine/storage/log_writer.h"
#include "perf/perf_util.h"

namespace {

const size_t kRecords = oddsrelay::perf::bench_records(500'000);

const oddsrelay::perf::SimFeed& feed() {
  static oddsrelay::perf::SimFeed f = oddsrelay::perf::sim_market_records(kRecords, 300);
  return f;
}

void run(benchmark::State& state, bool with_log) {
  using namespace oddsrelay;
  const auto& f = feed();
  uint64_t written = 0;
  for (auto _ : state) {
    state.PauseTiming();
    char tmpl[] = "/tmp/oddsrelay-bench-log-XXXXXX";
    std::string dir = mkdtemp(tmpl);
    auto engine = std::make_unique<Engine>();
    std::unique_ptr<LogWriter> log;
    std::unique_ptr<Pipeline> pipe = std::make_unique<Pipeline>(*engine);
    if (with_log) {
      DataDirRecovery r = recover_data_dir(dir + "/d", *engine);
      log = std::make_unique<LogWriter>(dir + "/d", LogOptions{});
      std::string err;
      if (!log->open(r, err)) {
        state.SkipWithError(err.c_str());
        break;
      }
      pipe->set_log(log.get());
    }
    pipe->start();
    for (const auto& r : f.setup) pipe->push(feed::Record(r));
    while (!pipe->idle()) usleep(100);
    std::vector<feed::Record> recs = f.markets;
    state.ResumeTiming();
    for (auto& r : recs) pipe->push(std::move(r));
    while (!pipe->idle()) usleep(50);
    state.PauseTiming();
    if (engine->current()->seq != f.setup.size() + f.markets.size()) {
      state.SkipWithError("not every record was applied");
      break;
    }
    pipe->stop();
    if (log) {
      log->close();
      written = log->stats().records.load();
      if (written != engine->current()->seq) {
        state.SkipWithError("the journal does not hold every applied record");
        break;
      }
    }
    pipe.reset();
    log.reset();
    engine.reset();
    std::filesystem::remove_all(dir);
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * f.markets.size()));
  state.counters["journal_records"] = static_cast<double>(written);
}

void BM_PipelineNoDataDir(benchmark::State& s) { run(s, false); }
void BM_PipelineWithJournal(benchmark::State& s) { run(s, true); }
BENCHMARK(BM_PipelineNoDataDir)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
BENCHMARK(BM_PipelineWithJournal)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();

}  // namespace
