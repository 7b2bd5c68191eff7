#include "engine/state_digest.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <vector>

#include <xxhash.h>

namespace oddsrelay {
namespace {

void appendf(std::string& out, const char* fmt, auto... args) {
  char buf[256];
  int n = std::snprintf(buf, sizeof buf, fmt, args...);
  out.append(buf, static_cast<size_t>(std::min<int>(n, sizeof buf - 1)));
}

void dump_opt(std::string& out, const char* name, const std::optional<int32_t>& v) {
  if (v) appendf(out, " %s=%d", name, *v);
  else appendf(out, " %s=null", name);
}

}  // namespace

std::string dump_state(const Snapshot& s) {
  std::vector<const EventEntry*> entries;
  entries.reserve(s.events.size());
  s.events.for_each([&](const EventEntry& e) { entries.push_back(&e); });
  std::sort(entries.begin(), entries.end(), [](auto* a, auto* b) { return a->number < b->number; });
  std::string out;
  appendf(out,
          "clock=%" PRId64 " feed_clock=%" PRId64 " evicted=%" PRIu64 " listed_live=%" PRIu64
          " listed_prematch=%" PRIu64 " markets=%" PRIu64 "\n",
          s.clock, s.feed_clock, s.evicted, s.listed_live, s.listed_prematch, s.markets);
  for (const EventEntry* e : entries) {
    appendf(out, "E %" PRIu64 " updated=%" PRId64 " key=", e->number, e->updated_at);
    out += e->key;
    out += e->info ? " " + e->info->json : std::string(" unlisted");
    out += '\n';
    for (const auto& m : e->markets)
      for (const Line& l : m->lines) {
        appendf(out, "M %" PRIu64 " %u ", e->number, m->id);
        out += l.key.view();
        appendf(out, " s=%u ls=%" PRId64, l.suspended, l.ls);
        for (uint32_t i = l.first; i < l.first + l.count; ++i) {
          const Outcome& o = m->outcomes[i];
          appendf(out, " %u:%d:%u:%d:%" PRId64, o.id, o.price, o.flags, o.prev_price, o.ts);
        }
        out += '\n';
      }
    if (const ScoreState* sc = e->score.get()) {
      appendf(out, "S %" PRIu64 " ts=%" PRId64 " status=%s", e->number, sc->ts, feed::status_name(sc->last.status));
      dump_opt(out, "home", sc->last.home);
      dump_opt(out, "away", sc->last.away);
      if (sc->last.clock) out += " clock=" + *sc->last.clock;
      if (sc->last.period) out += " period=" + *sc->last.period;
      if (sc->ended) {
        appendf(out, " final_v=%u final_at=%" PRId64 " result=%s", sc->final_version, sc->final_at,
                feed::result_name(sc->final_result));
        if (sc->final_score) appendf(out, " final=%d:%d", sc->final_score->first, sc->final_score->second);
      }
      out += '\n';
    }
    if (const StatsState* st = e->stats.get()) {
      appendf(out, "T %" PRIu64 " ts=%" PRId64 " final=%d", e->number, st->ts, st->final ? 1 : 0);
      for (size_t i = 0; i < st->values.size(); ++i)
        if (st->values[i]) appendf(out, " %s=%d:%d", feed::kStatNames[i], st->values[i]->first, st->values[i]->second);
      out += '\n';
    }
  }
  return out;
}

uint64_t state_digest(const Snapshot& s) {
  std::string d = dump_state(s);
  return XXH3_64bits(d.data(), d.size());
}

}  // namespace oddsrelay
