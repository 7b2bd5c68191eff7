#include "engine/sources/sources.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "engine/storage/feed_file.h"
#include "protocol/clock.h"
#include "protocol/named_thread.h"

namespace oddsrelay {

using Clock = std::chrono::steady_clock;

void SimSource::start() {
  thread_ = named_thread("simulator", [this] { run(); });
}

void SimSource::stop() {
  stop_.request();
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
  // Step k is due at t0 + k steps, in whole nanoseconds so that the step
  // the thread wakes for is the one the clock says is due.
  const auto step = std::chrono::nanoseconds(std::max<int64_t>(1, std::llround(sim.step_ms() * 1e6)));
  const auto t0 = Clock::now();
  uint64_t steps = 0;
  while (!stop_.requested()) {
    const auto due = static_cast<uint64_t>((Clock::now() - t0) / step);
    // Catch up after a stall, but in bounded bites so stop() stays prompt.
    for (int k = 0; steps < due && k < 10'000; ++k, ++steps) {
      sim.step(wall_ms(), out);
      push_all();
    }
    if (steps < due) continue;
    stop_.sleep_until(t0 + step * static_cast<int64_t>(steps + 1));
  }
}

void ReplaySource::start() {
  thread_ = named_thread("replay", [this] { run(); });
}

void ReplaySource::stop() {
  stop_.request();
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
  feed::Record rec;
  int64_t first_at = 0;
  bool have_first = false;
  const auto t0 = Clock::now();
  while (!stop_.requested() && reader.next(rec)) {
    if (speed_ > 0) {
      if (!have_first) {
        first_at = rec.at;
        have_first = true;
      }
      auto due = t0 + std::chrono::microseconds(static_cast<int64_t>((rec.at - first_at) * 1000.0 / speed_));
      if (stop_.sleep_until(due)) break;  // stopped while waiting: the record is not due yet
    }
    rec.arrived_ns = mono_ns();  // paced: when it fell due; at max speed: when it was read
    pipeline_.push(std::move(rec));
    status_.records.fetch_add(1, std::memory_order_relaxed);
    rec = feed::Record{};
  }
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
