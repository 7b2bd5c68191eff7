#include "tools/sources/bus_source.h"

#include <chrono>
#include <cstdio>

#include "engine/bus/log_reader.h"
#include "protocol/feed_reader.h"

namespace oddsrelay {

void BusSource::start() { thread_ = std::thread([this] { run(); }); }

void BusSource::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

std::string BusSource::describe() const {
  return "bus " + link_.url().str() + " (epoch " + joined_.epoch + ", from seq " + std::to_string(joined_.seq) + ")";
}

void BusSource::fail(const std::string& why) {
  {
    std::lock_guard lock(mu_);
    error_ = why;
  }
  stats_.stopped = true;
  std::fprintf(stderr, "oddsrelay: stopped following the bus: %s; serving the state at seq %llu (restart to rejoin)\n",
               why.c_str(), static_cast<unsigned long long>(stats_.seq.load()));
}

void BusSource::run() {
  auto parser = std::make_unique<feed::FeedParser>();
  bus::LogReader reader;
  bus::LogMessage m;
  bool open = false;
  std::string err, last_err;
  while (!stop_.load(std::memory_order_relaxed)) {
    if (!open) {
      // The next message after the last one applied: after a reader failure
      // nothing is skipped or applied twice.
      if (!link_.connected() || !reader.open(link_, stats_.stream_seq.load() + 1, err)) {
        if (link_.connected() && err != last_err) std::fprintf(stderr, "oddsrelay: bus: %s; retrying\n", err.c_str());
        last_err = err;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        continue;
      }
      open = true;
    }
    auto r = reader.next(m, 100, err);
    if (r == bus::LogReader::Next::Timeout) continue;
    if (r == bus::LogReader::Next::Failed) {
      reader.close();
      open = false;
      stats_.resubscribes.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    const uint64_t seq = stats_.seq.load(std::memory_order_relaxed);
    const bus::Fit f = bus::fit(m, joined_.epoch, seq);
    if (f == bus::Fit::Old) continue;
    if (f != bus::Fit::Next) {
      char buf[256];
      std::snprintf(buf, sizeof buf, "log message #%llu (%s:%llu, %llu records) does not follow seq %llu of %s: %s",
                    static_cast<unsigned long long>(m.stream_seq), m.epoch.c_str(),
                    static_cast<unsigned long long>(m.last), static_cast<unsigned long long>(m.records),
                    static_cast<unsigned long long>(seq), joined_.epoch.c_str(), bus::fit_name(f));
      fail(buf);
      break;
    }
    // Parse the whole message first: a line that is not a record would move
    // every later position, so none of the message is applied then.
    std::vector<feed::Record> recs;
    recs.reserve(m.records);
    std::string bad;
    bus::for_each_line(m.data, [&](std::string_view line) {
      if (!bad.empty()) return;
      feed::Record rec;
      if (parser->parse(line, rec) == feed::LineStatus::Record) recs.push_back(std::move(rec));
      else bad = parser->error().empty() ? "not a record" : parser->error();
    });
    if (!bad.empty()) {
      status_.malformed.fetch_add(1, std::memory_order_relaxed);
      fail("log message #" + std::to_string(m.stream_seq) + " holds a line that is not a record (" + bad + ")");
      break;
    }
    for (auto& rec : recs) pipeline_.push(std::move(rec));
    status_.records.fetch_add(recs.size(), std::memory_order_relaxed);
    stats_.seq.store(m.last, std::memory_order_relaxed);
    stats_.stream_seq.store(m.stream_seq, std::memory_order_relaxed);
    stats_.pending.store(m.pending, std::memory_order_relaxed);
    stats_.messages.fetch_add(1, std::memory_order_relaxed);
  }
  reader.close();
}

}  // namespace oddsrelay
