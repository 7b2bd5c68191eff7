// Feed line parsing (RapidJSON, into typed records) and encoding, per line:
// the replay source's per-record CPU cost, next to a baseline that only
// validates the same lines as JSON with RapidJSON's SAX reader (the floor
// for any JSON-based reader). Every line must parse (as a record, as valid
// JSON) in the timed loops too; one that does not exits 1 instead of
// reporting a rate. The lines are the simulator's, or those of a feed file
// named by ODDSRELAY_BENCH_FEED (a captured feed: its header is skipped;
// every other line must be a record).
//   build/perf/bench_parse
//   ODDSRELAY_BENCH_FEED=capture.jsonl build/perf/bench_parse
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <rapidjson/reader.h>

#include "perf/perf_util.h"
#include "protocol/feed_reader.h"
#include "protocol/feed_writer.h"

namespace {

void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "bench_parse: FAILED: %s\n", what);
  std::exit(1);
}

const std::vector<std::string>& lines() {
  static std::vector<std::string> v = [] {
    if (const char* path = std::getenv("ODDSRELAY_BENCH_FEED")) {
      std::vector<std::string> out;
      FILE* f = std::fopen(path, "r");
      check(f != nullptr, "ODDSRELAY_BENCH_FEED does not open");
      std::string line;
      for (int c; (c = std::fgetc(f)) != EOF;) {
        if (c != '\n') {
          line += static_cast<char>(c);
          continue;
        }
        if (line.find("\"op\":\"header\"") == std::string::npos && !line.empty()) out.push_back(line);
        line.clear();
      }
      std::fclose(f);
      check(!out.empty(), "ODDSRELAY_BENCH_FEED holds no record");
      return out;
    }
    auto f = oddsrelay::perf::sim_market_records(oddsrelay::perf::bench_records(100'000));
    std::vector<std::string> out;
    for (auto* part : {&f.setup, &f.markets})
      for (const auto& r : *part) {
        out.emplace_back();
        oddsrelay::feed::write_record(r, out.back());
      }
    return out;
  }();
  return v;
}

void BM_ParseFeedLine(benchmark::State& state) {
  const auto& ls = lines();
  oddsrelay::feed::FeedParser p;
  p.fast_markets(state.range(0) != 0);
  oddsrelay::feed::Record r;
  size_t i = 0, bytes = 0, bad = 0;
  for (auto _ : state) {
    const std::string& l = ls[i++ % ls.size()];
    bytes += l.size();
    bad += p.parse(l, r) != oddsrelay::feed::LineStatus::Record;
  }
  check(bad == 0, "a feed line did not parse as a record");
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
// fast:1 is the parser as shipped (market lines on the SAX fast path),
// fast:0 the DOM path every line took before it.
BENCHMARK(BM_ParseFeedLine)->ArgName("fast")->Arg(1)->Arg(0);

void BM_BaselineJsonValidate(benchmark::State& state) {
  const auto& ls = lines();
  rapidjson::BaseReaderHandler<> h;
  size_t i = 0, bytes = 0, bad = 0;
  for (auto _ : state) {
    const std::string& l = ls[i++ % ls.size()];
    bytes += l.size();
    rapidjson::Reader reader;
    rapidjson::StringStream ss(l.c_str());
    bad += reader.Parse(ss, h).IsError();
  }
  check(bad == 0, "a feed line is not valid JSON");
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
BENCHMARK(BM_BaselineJsonValidate);

void BM_EncodeFeedLine(benchmark::State& state) {
  auto f = oddsrelay::perf::sim_market_records(10'000);
  std::string out;
  size_t i = 0;
  for (auto _ : state) {
    out.clear();
    oddsrelay::feed::write_record(f.markets[i++ % f.markets.size()], out);
    benchmark::DoNotOptimize(out.data());
  }
  check(!out.empty() && out.front() == '{', "encoding wrote no JSON object");
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_EncodeFeedLine);

}  // namespace
