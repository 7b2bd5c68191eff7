// The built-in upstream: a deterministic generator of feed records (events,
// odds, scores, stats, removals) for --feed sim and `oddsfeed gen`.
//
// It runs on virtual time: every step advances it by 1000/rate ms and emits
// one odds record plus whatever lifecycle records fall due (kick-offs,
// goals with their suspensions and re-openings, clock ticks, full time,
// removals and replacement fixtures). The record sequence depends only on
// the options and the start time; the caller stamps `at` (the wall clock in
// --feed sim, virtual time in `oddsfeed gen`).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "protocol/feed_record.h"

namespace oddsrelay::sim {

struct SimOptions {
  uint64_t seed = 1;
  uint32_t events = 300;     // concurrent fixtures (live + pre-match)
  double rate = 200;         // odds records per second
  int64_t minute_ms = 4000;  // virtual ms per match minute (4000: a 90' match lasts 6 min)
  // Virtual ms between lifecycle ticks (kick-offs, scoreboard and clock
  // records, full time, removals); 0: min(1000, minute_ms), one scoreboard a
  // match minute. Longer ticks play several minutes at once: fewer records
  // a fixture, for soaks that need many fixtures (perf/soak).
  int64_t tick_ms = 0;
  // Per mille of ended fixtures whose final score is corrected later (a
  // second `ended` record with another score, some after the removal).
  // Drawn from a stream of its own: 0 leaves every other record as it was.
  uint32_t correct_permille = 0;
};

class Simulator {
 public:
  explicit Simulator(const SimOptions& opts);
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // Emits the opening state (every fixture, its markets and scoreboard) with
  // virtual time starting at `start_ms`.
  void open(int64_t start_ms, int64_t at, std::vector<feed::Record>& out);
  // One step; records are appended to `out`, stamped `at`.
  void step(int64_t at, std::vector<feed::Record>& out);
  int64_t now() const;  // virtual time, unix ms
  double step_ms() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace oddsrelay::sim
