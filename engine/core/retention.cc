#include "engine/core/retention.h"

namespace oddsrelay {

namespace {
constexpr size_t kControlBlock = 16;
constexpr size_t kAllocRound = 16;  // jemalloc size classes: small allocations round up
size_t rounded(size_t n) { return (n + kAllocRound - 1) & ~(kAllocRound - 1); }
}  // namespace

size_t info_bytes(const feed::EventObject* info) {
  if (!info) return 0;
  // The parsed fields hold about what the canonical JSON says, which is
  // kept beside them.
  return rounded(sizeof(feed::EventObject) + kControlBlock) + 2 * rounded(info->json.size() + 1);
}

size_t market_bytes(const Market& m) {
  return sizeof(MarketRef) +
         rounded(sizeof(Market) + kControlBlock + m.lines.size() * sizeof(Line) + m.outcomes.size() * sizeof(Outcome));
}

size_t score_bytes(const ScoreState* s) {
  if (!s) return 0;
  // Timeline clocks are "MM:SS": inside the string, no heap of their own.
  size_t n = rounded(sizeof(ScoreState) + kControlBlock) + s->timeline.size() * sizeof(ScorePoint);
  for (const MarketRef& m : s->odds_at_end) n += market_bytes(*m);
  return n;
}

size_t stats_bytes(const StatsState* s) { return s ? rounded(sizeof(StatsState) + kControlBlock) : 0; }

size_t history_header_bytes() { return rounded(sizeof(LineHistory) + kControlBlock); }

size_t history_bytes(const LineHistory* h) {
  if (!h) return 0;
  size_t n = history_header_bytes() + (h->packed.empty() ? 0 : rounded(h->packed.capacity()));
  for (const MarketRef& m : h->markets) n += market_bytes(*m);
  return n;
}

size_t entry_bytes(const EventEntry& e) {
  size_t n = kEntryBytes + info_bytes(e.info.get()) + score_bytes(e.score.get()) + stats_bytes(e.stats.get()) +
             history_bytes(e.history.get());
  for (const MarketRef& m : e.markets) n += market_bytes(*m);
  return n;
}

}  // namespace oddsrelay
