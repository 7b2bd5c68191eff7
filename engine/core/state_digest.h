// A canonical text dump of a snapshot and its hash: the yardstick for
// "the same state" (capture equals live, gzip equals plain, a journal
// restart equals the run that wrote it, a torn tail is never half-applied;
// later: a compacted snapshot or a relay edge equals its source).
//
// Contract (tests/engine/state_digest_test.cc holds it to this):
// - Every field of the persistent state is in the dump, so two snapshots
//   differ in their digest whenever they differ in any one of them:
//   * snapshot: clock, feed_clock (the newest `at` applied: retention's
//     clock), last_live_at, evicted (events that left at the retention
//     horizon), listed_live, listed_prematch, markets, outcomes, sports (per
//     sport: live and pre-match counts);
//   * event: number, key (display id), updated_at, the event object (by its
//     canonical JSON, which encodes every field of feed::EventObject) or
//     its absence (unlisted);
//   * odds: per market its id, per line (in upstream order) key, s, ls and
//     outcome count, per outcome id, price, flags, prev_price, ts;
//   * score: the last record as received (home, away, status, clock,
//     period, match_length, ht, kickoff, result, postponed) and its ts; the
//     timeline (at, home, away, clock per point, oldest first); the
//     settlement anchor (ended, final score, final result, final version,
//     final at) and the odds at the first `ended`, dumped like the odds;
//   * withdrawn lines (engine/core/line_history.h): their count and the number
//     dropped, and the lines as last read, dumped like the odds, or none;
//   * stats: each value (or its absence), final, ts.
// - It depends only on that content: not on the order events were inserted
//   or how the records were batched (events are dumped by number, markets
//   by id, the trie's hash order never shows), nor on where anything lives
//   in memory.
// - Not included, on purpose: Snapshot::seq (a batch number: the same
//   state is reached in different numbers of batches, and seq will be
//   redefined), and the writer's bookkeeping (EventEntry::edit and
//   ::change, Line::first: where a line's outcomes sit in the flat array),
//   the counters derived from the events for /v1/status (ended,
//   ended_live, ended_prematch, bytes) and retain_ended_ms (configuration,
//   not state; the snapshot file header records it).
// - Strings are quoted and escaped and every record is one line, so no
//   content can be mistaken for another field. The first line names the
//   dump format; changing the format changes every digest (the pinned
//   value in the test says so).
#pragma once

#include <cstdint>
#include <string>

#include "engine/core/snapshot.h"

namespace oddsrelay {

std::string dump_state(const Snapshot& s);
uint64_t state_digest(const Snapshot& s);  // XXH3-64 of dump_state

}  // namespace oddsrelay
