#include "engine/sources/sources.h"

#include <chrono>
#include <cstdio>
#include <vector>

#include "engine/sources/read_ahead.h"
#include "engine/storage/feed_file.h"
#include "protocol/clock.h"
#include "protocol/named_thread.h"

namespace oddsrelay {

using Clock = std::chrono::steady_clock;

void SimSource::start() {
  thread_ = named_thread("simulator", [this] { run(); });
}

void SimSource::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

std::string SimSource::describe() const {
  char buf[128];
  std::snprintf(buf, sizeof buf, "sim seed=%llu events=%u rate=%g", static_cast<unsigned long long>(opts_.seed),
                opts_.events, opts_.rate);
  return buf;
}

void SimSource::run() {
  sim::Simulator sim(opts_);
  std::vector<feed::Record> out;
  const int64_t start = wall_ms();
  sim.open(start, start, out);
  auto push_all = [&] {
    status_.records.fetch_add(out.size(), std::memory_order_relaxed);
    const int64_t made = mono_ns();  // a step's records are made together
    for (auto& r : out) {
      r.arrived_ns = made;
      pipeline_.push(std::move(r));
    }
    out.clear();
  };
  push_all();
  const auto t0 = Clock::now();
  uint64_t steps = 0;
  while (!stop_.load(std::memory_order_relaxed)) {
    double elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    auto due = static_cast<uint64_t>(elapsed_ms / sim.step_ms());
    // Catch up after a stall, but in bounded bites so stop() stays prompt.
    for (int k = 0; steps < due && k < 10'000; ++k, ++steps) {
      sim.step(wall_ms(), out);
      push_all();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void ReplaySource::start() {
  thread_ = named_thread("replay", [this] { run(); });
}

void ReplaySource::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

std::string ReplaySource::describe() const {
  return "replay " + path_ + (speed_ > 0 ? " speed=" + std::to_string(speed_) : std::string(" speed=max"));
}

void ReplaySource::run() {
  FeedFileReader reader;
  reader.keep_text(pipeline_.record_text());
  std::string err;
  if (!reader.open(path_, err)) {
    status_.error = err;
    status_.done = true;
    return;
  }
  constexpr uint64_t kReportedProblems = 20;
  reader.on_problem([&](uint64_t line, feed::LineStatus, const std::string& why) {
    uint64_t n = status_.malformed.fetch_add(1, std::memory_order_relaxed) + 1;
    if (n <= kReportedProblems)
      std::fprintf(stderr, "oddsrelay: %s line %llu skipped: %s\n", path_.c_str(),
                   static_cast<unsigned long long>(line), why.c_str());
  });
  // The read-ahead thread reads and parses (malformed lines are reported
  // from there, as it reaches them); this thread paces the records and
  // hands them to the engine, so at max speed parsing chunk N+1 overlaps
  // the push and apply of chunk N.
  ReadAhead ahead(reader);
  std::vector<feed::Record> chunk;
  int64_t first_at = 0;
  bool have_first = false, stopped = false;
  Clock::time_point t0;  // when the first record was due: handed over at once
  while (!stopped && !stop_.load(std::memory_order_relaxed) && ahead.next(chunk)) {
    // A record arrives when it is handed to the engine, not when it was
    // parsed: at max speed the whole chunk now, paced each when it falls due.
    const int64_t handed_ns = mono_ns();
    if (speed_ <= 0) {
      for (feed::Record& rec : chunk) rec.arrived_ns = handed_ns;
      const size_t n = chunk.size();
      pipeline_.push_bulk(chunk);
      status_.records.fetch_add(n, std::memory_order_relaxed);
      continue;
    }
    for (feed::Record& rec : chunk) {
      if (!have_first) {  // the clock starts at the first record, not before its chunk was parsed
        first_at = rec.at;
        t0 = Clock::now();
        have_first = true;
      }
      auto due = t0 + std::chrono::microseconds(static_cast<int64_t>((rec.at - first_at) * 1000.0 / speed_));
      while (Clock::now() < due && !stop_.load(std::memory_order_relaxed))
        std::this_thread::sleep_until(std::min(due, Clock::now() + std::chrono::milliseconds(100)));
      if (stop_.load(std::memory_order_relaxed)) {  // stopped while waiting: the record is not due yet
        stopped = true;
        break;
      }
      rec.arrived_ns = mono_ns();  // paced: when it fell due, not when it was read ahead
      pipeline_.push(std::move(rec));
      status_.records.fetch_add(1, std::memory_order_relaxed);
    }
  }
  ahead.finish();  // from here the reader's stats and fatal error are final
  status_.unknown_ops = reader.stats().unknown_ops;
  if (!reader.fatal().empty()) status_.error = reader.fatal();
  uint64_t bad = status_.malformed.load();
  if (bad > kReportedProblems)
    std::fprintf(stderr, "oddsrelay: %s: %llu more malformed lines not shown\n", path_.c_str(),
                 static_cast<unsigned long long>(bad - kReportedProblems));
  std::fprintf(stderr, "oddsrelay: replay of %s finished: %llu records, %llu malformed, %llu unknown ops%s%s\n",
               path_.c_str(), static_cast<unsigned long long>(status_.records.load()),
               static_cast<unsigned long long>(bad), static_cast<unsigned long long>(status_.unknown_ops.load()),
               status_.error.empty() ? "" : "; stopped: ", status_.error.c_str());
  status_.done = true;
}

}  // namespace oddsrelay
