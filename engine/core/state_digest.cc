#include "engine/core/state_digest.h"

#include <xxhash.h>

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace oddsrelay {
namespace {

// Bumped whenever the dump's shape changes, so dumps of two formats never
// compare equal by accident.
constexpr const char* kFormat = "oddsrelay-state 4\n";

void appendf(std::string& out, const char* fmt, auto... args) {
  char buf[256];
  int n = std::snprintf(buf, sizeof buf, fmt, args...);
  out.append(buf, static_cast<size_t>(std::min<int>(n, sizeof buf - 1)));
}

// A string as one token: quoted, with quotes, backslashes and every byte
// outside printable ASCII escaped, so it can hold no separator.
void quoted(std::string& out, std::string_view s) {
  out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      appendf(out, "\\x%02x", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

const char* result(feed::MatchResult r) { return r == feed::MatchResult::None ? "none" : feed::result_name(r); }

void opt_str(std::string& out, const char* name, const std::optional<std::string>& v) {
  appendf(out, " %s=", name);
  if (v)
    quoted(out, *v);
  else
    out += "null";
}

template <class T>
void opt_int(std::string& out, const char* name, const std::optional<T>& v) {
  if (v)
    appendf(out, " %s=%" PRId64, name, static_cast<int64_t>(*v));
  else
    appendf(out, " %s=null", name);
}

void opt_pair(std::string& out, const char* name, const std::optional<std::pair<int32_t, int32_t>>& v) {
  if (v)
    appendf(out, " %s=%d:%d", name, v->first, v->second);
  else
    appendf(out, " %s=null", name);
}

// Integers as %d / %u / PRId64 print them, without printf: a large state's
// dump (the digest every replay ends with) is mostly outcomes.
template <class T>
void num(std::string& out, T v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, static_cast<size_t>(r.ptr - buf));
}

// "<tag><kind> <number> <market>": the head of a market's lines.
void market_head(std::string& out, const char* tag, char kind, uint64_t number, uint32_t market) {
  out += tag;
  out += kind;
  out += ' ';
  num(out, number);
  out += ' ';
  num(out, market);
}

// One header line per market, one line per line with its outcomes.
// `tag` tells the current odds ("M"/"L") from the odds at the end ("AM"/"AL").
void dump_markets(std::string& out, const char* tag, uint64_t number, const MarketList& markets) {
  for (const MarketRef& ref : markets) {
    const Market& m = *ref;
    market_head(out, tag, 'M', number, ref.id);
    out += " id=";
    num(out, m.id);
    out += " lines=";
    num(out, m.lines.size());
    out += " outcomes=";
    num(out, m.outcomes.size());
    out += '\n';
    for (const Line& l : m.lines) {
      market_head(out, tag, 'L', number, ref.id);
      out += ' ';
      quoted(out, l.key.view());
      out += " s=";
      num(out, unsigned{l.suspended});
      out += " ls=";
      num(out, l.ls);
      out += " n=";
      num(out, l.count);
      for (uint32_t i = l.first; i < l.first + l.count && i < m.outcomes.size(); ++i) {
        const Outcome& o = m.outcomes[i];
        out += ' ';
        num(out, o.id);
        out += ':';
        num(out, o.price);
        out += ':';
        num(out, o.flags);
        out += ':';
        num(out, o.prev_price);
        out += ':';
        num(out, o.ts);
      }
      out += '\n';
    }
  }
}

void dump_score(std::string& out, uint64_t number, const ScoreState& sc) {
  const feed::ScoreRec& r = sc.last;
  appendf(out, "S %" PRIu64 " ts=%" PRId64 " status=%s", number, sc.ts, feed::status_name(r.status));
  opt_int(out, "home", r.home);
  opt_int(out, "away", r.away);
  opt_str(out, "clock", r.clock);
  opt_str(out, "period", r.period);
  opt_int(out, "match_length", r.match_length);
  opt_pair(out, "ht", r.ht);
  opt_int(out, "kickoff", r.kickoff);
  appendf(out, " result=%s postponed=%d\n", result(r.result), r.postponed ? 1 : 0);
  for (const ScorePoint& p : sc.timeline) {
    appendf(out, "P %" PRIu64 " at=%" PRId64 " %d:%d clock=", number, p.at, p.home, p.away);
    quoted(out, p.clock);
    out += '\n';
  }
  appendf(out, "F %" PRIu64 " ended=%d", number, sc.ended ? 1 : 0);
  opt_pair(out, "score", sc.final_score);
  appendf(out, " result=%s version=%u at=%" PRId64 " odds_at_end=%zu\n", result(sc.final_result), sc.final_version,
          sc.final_at, sc.odds_at_end.size());
  dump_markets(out, "A", number, sc.odds_at_end);
}

void dump_stats(std::string& out, uint64_t number, const StatsState& st) {
  appendf(out, "T %" PRIu64 " ts=%" PRId64 " final=%d", number, st.ts, st.final ? 1 : 0);
  for (size_t i = 0; i < st.values.size(); ++i) opt_pair(out, feed::kStatNames[i], st.values[i]);
  out += '\n';
}

// The dump, handed to `flush` a piece at a time (each piece whole lines;
// `flush` may consume and clear `out`): the digest hashes a large state's
// dump as it is written instead of holding all of it.
template <class Flush>
void dump(const Snapshot& s, std::string& out, Flush&& flush) {
  constexpr size_t kPiece = 256 * 1024;
  std::vector<const EventEntry*> entries;
  entries.reserve(s.events.size());
  s.events.for_each([&](const EventEntry& e) { entries.push_back(&e); });
  std::sort(entries.begin(), entries.end(), [](auto* a, auto* b) { return a->number < b->number; });
  out += kFormat;
  // Two calls: appendf's buffer would cut one line of nine 20-digit numbers.
  appendf(out, "snapshot clock=%" PRId64 " feed_clock=%" PRId64 " last_live_at=%" PRId64 " evicted=%" PRIu64, s.clock,
          s.feed_clock, s.last_live_at, s.evicted);
  appendf(out,
          " listed_live=%" PRIu64 " listed_prematch=%" PRIu64 " markets=%" PRIu64 " outcomes=%" PRIu64 " events=%zu\n",
          s.listed_live, s.listed_prematch, s.markets, s.outcomes, entries.size());
  out += "sports";
  for (const SportCount& c : s.sports) appendf(out, " %d:%u:%u", c.sport, c.live, c.prematch);
  out += '\n';
  for (const EventEntry* e : entries) {
    appendf(out, "E %" PRIu64 " updated=%" PRId64 " key=", e->number, e->updated_at);
    quoted(out, e->key);
    out += " info=";
    // Canonical JSON (RapidJSON escapes control characters): one line, and
    // the last token of it.
    out += e->info ? e->info->json : std::string("null");
    out += '\n';
    dump_markets(out, "", e->number, e->markets);
    if (const LineHistory* h = e->history.get()) {  // withdrawn lines, as last read
      appendf(out, "W %" PRIu64 " lines=%u dropped=%u\n", e->number, h->lines, h->dropped);
      MarketList unpacked;
      dump_markets(out, "W", e->number, history_markets(*h, unpacked));
    } else {
      appendf(out, "W %" PRIu64 " none\n", e->number);
    }
    if (e->score)
      dump_score(out, e->number, *e->score);
    else
      appendf(out, "S %" PRIu64 " none\n", e->number);
    if (e->stats)
      dump_stats(out, e->number, *e->stats);
    else
      appendf(out, "T %" PRIu64 " none\n", e->number);
    if (out.size() >= kPiece) flush(out);
  }
  flush(out);
}

}  // namespace

std::string dump_state(const Snapshot& s) {
  std::string out;
  dump(s, out, [](std::string&) {});
  return out;
}

// XXH3's streaming form gives the one-shot hash of the whole dump.
uint64_t state_digest(const Snapshot& s) {
  XXH3_state_t* st = XXH3_createState();
  XXH3_64bits_reset(st);
  std::string out;
  dump(s, out, [st](std::string& piece) {
    XXH3_64bits_update(st, piece.data(), piece.size());
    piece.clear();
  });
  const uint64_t h = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return h;
}

}  // namespace oddsrelay
