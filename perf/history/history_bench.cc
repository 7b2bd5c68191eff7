// The history thread's own cost, without the rest of the server: a capture
// (perf/history/setup.sh writes one) parsed up front, then applied to a
// HistoryStore in batches of 64 records, as the recorder applies published
// batches (engine/history/history_recorder.h). Prints the time per record,
// the points and bytes the store reports and, beside them, the bytes the
// allocator really handed out for it (jemalloc's stats.allocated), so that
// the store's count can be checked; then where the bytes are. Run it under
// callgrind with --toggle-collect='*HistoryStore::apply*' for the
// recorder's instructions alone.
//   build/perf/bench_history FEED.jsonl [batch]
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "engine/history/history_store.h"
#include "protocol/feed_reader.h"

using namespace oddsrelay;

extern "C" int mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen) __attribute__((weak));

namespace {

// Bytes allocated and not freed, as jemalloc counts them (0 without it).
uint64_t allocated() {
  if (!mallctl) return 0;
  uint64_t epoch = 1;
  size_t len = sizeof epoch;
  mallctl("epoch", &epoch, &len, &epoch, len);
  size_t v = 0;
  len = sizeof v;
  return mallctl("stats.allocated", &v, &len, nullptr, 0) == 0 ? v : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_history FEED.jsonl [batch]\n");
    return 2;
  }
  const size_t batch = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 64;
  std::ifstream in(argv[1]);
  feed::FeedParser parser;
  std::vector<history::LoggedBatch> batches;
  uint64_t seq = 0;
  for (std::string line; std::getline(in, line);) {
    feed::Record r;
    if (parser.parse(line, r) != feed::LineStatus::Record) continue;
    if (batches.empty() || batches.back().records.size() == batch) batches.push_back({seq + 1, seq, {}, {}});
    batches.back().records.push_back(std::move(r));
    batches.back().seq = ++seq;
  }
  if (seq == 0) {
    std::fprintf(stderr, "bench_history: no records in %s\n", argv[1]);
    return 1;
  }
  const uint64_t before = allocated();
  auto* store = new history::HistoryStore(size_t{1} << 40);  // no bound: what the records make
  const auto t0 = std::chrono::steady_clock::now();
  for (const history::LoggedBatch& b : batches) store->apply(b, "bench");
  const auto t1 = std::chrono::steady_clock::now();
  const uint64_t held = allocated() - before;
  const history::HeldState st = store->state();
  const double ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
  std::printf("bench_history: %" PRIu64 " records in %.3f s, %.0f ns a record\n", seq, ns / 1e9, ns / double(seq));
  std::printf("  %" PRIu64 " events, %" PRIu64 " points, %" PRIu64 " bytes (%.2f a point) as the store counts them\n",
              st.events, st.points, st.bytes, double(st.bytes) / double(st.points));
  if (held)
    std::printf("  %" PRIu64 " bytes (%.2f a point) allocated by the allocator for it\n", held,
                double(held) / double(st.points));
  const history::HistoryBytes br = store->breakdown();
  std::printf("  where: %" PRIu64 " markets, %" PRIu64 " outcomes, %" PRIu64 " layouts\n", br.markets, br.outcomes,
              br.layouts);
  for (const auto& [name, bytes] : br.parts())
    std::printf("    %-28s %12" PRIu64 " bytes  %5.2f a point\n", name, bytes, double(bytes) / double(st.points));
  return 0;
}
