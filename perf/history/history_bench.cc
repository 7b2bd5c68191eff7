// The history thread's own cost, without the rest of the server: a capture
// (perf/history/setup.sh writes one) parsed up front, then applied to a
// HistoryStore in batches of 64 records, as the recorder applies published
// batches (engine/history/history_recorder.h). Prints the time per record,
// the points and bytes the store reports and, beside them, the bytes the
// allocator really handed out for it (jemalloc's stats.allocated), so that
// the store's count can be checked; then where the bytes are. Run it under
// callgrind with --toggle-collect='*HistoryStore::apply*' for the
// recorder's instructions alone. Then the same batches through the
// segments' codec (engine/history/segment_codec.h), which a server with a
// data dir runs on the same thread to write the history's files: its time
// per record and bytes per point (callgrind: --toggle-collect='*SegmentCodec::put*').
//   build/perf/bench_history FEED.jsonl [batch]
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "engine/history/history_store.h"
#include "engine/history/segment_codec.h"
#include "engine/storage/history_segments.h"
#include "perf/perf_util.h"
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

constexpr const char* kUsage =
    "usage: bench_history FEED.jsonl [batch]\n"
    "  Applies a capture's records to the odds history's store in batches of\n"
    "  `batch` records (default 64), then through the segments' codec; prints\n"
    "  the time per record and the bytes per point of each.\n"
    "  perf/history/setup.sh writes a capture; perf/history/run.sh runs this.\n";

int main(int argc, char** argv) {
  perf::check_args(argc, argv, {1, 2}, kUsage);
  const size_t batch = argc > 2 ? perf::integer_arg(argv[2], "batch", "bench_history") : 64;
  std::ifstream in(argv[1]);
  if (!in) {
    std::fprintf(stderr, "bench_history: cannot read %s\n", argv[1]);
    return 1;
  }
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

  // The files' writer: a segment starts again every 64 MB, or once its
  // state passes its bound, as HistorySegments' defaults do.
  const uint64_t codec_before = allocated();
  auto* codec_ptr = new history::SegmentCodec;  // kept to the end: its state is what the writer holds
  history::SegmentCodec& codec = *codec_ptr;
  std::vector<uint8_t> out;
  uint64_t written = 0, segments = 1;
  size_t peak_held = 0;
  XXH3_state_t* digest = XXH3_createState();  // of every byte written: a change of the writer keeps it
  XXH3_64bits_reset(digest);
  const auto c0 = std::chrono::steady_clock::now();
  for (const history::LoggedBatch& b : batches) {
    codec.put(b.first_seq, b.seq, b.records, b.evicted, out);
    peak_held = std::max(peak_held, codec.held());
    if (out.size() >= history::HistorySegments::kDefaultSegmentBytes ||
        codec.held() >= history::HistorySegments::kDefaultStateBytes) {
      ++segments;
      XXH3_64bits_update(digest, out.data(), out.size());
      written += out.size();
      out.clear();
      codec.new_segment();
    }
  }
  const auto c1 = std::chrono::steady_clock::now();
  XXH3_64bits_update(digest, out.data(), out.size());
  written += out.size();
  // Freed before the count: `out = {}` would assign an empty list and keep
  // the capacity, counting the last file's bytes as the writer's state.
  std::vector<uint8_t>().swap(out);
  const uint64_t codec_held = allocated() - codec_before;
  const double cns = std::chrono::duration<double, std::nano>(c1 - c0).count();
  std::printf("segments: %" PRIu64 " bytes (%.2f a point, digest %016" PRIx64 ") in %.3f s, %.0f ns a record\n",
              written, double(written) / double(st.points), static_cast<uint64_t>(XXH3_64bits_digest(digest)),
              cns / 1e9, cns / double(seq));
  XXH3_freeState(digest);
  const history::SegmentCodec::Bytes cb = codec.bytes();
  std::printf("  %" PRIu64 " segments; the writer's state at most %zu bytes as it keeps count\n", segments, peak_held);
  std::printf(
      "  the writer's state at the end: %zu events, %zu bytes as it counts them (layouts %zu, names %zu, "
      "indexes %zu, heads %zu)\n",
      codec.events(), cb.total(), cb.layouts, cb.names, cb.indexes, cb.heads);
  if (codec_held) std::printf("  %" PRIu64 " bytes allocated by the allocator for it\n", codec_held);
  return 0;
}
