#include "engine/bus/bus_source.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

#include "engine/bus/log_reader.h"
#include "protocol/clock.h"
#include "protocol/feed_reader.h"
#include "protocol/named_thread.h"

namespace oddsrelay {

void BusSource::start() {
  thread_ = named_thread("bus-follow", [this] { run(); });
}

void BusSource::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

std::string BusSource::describe() const {
  const bus::JoinResult j = joined();
  return "bus " + link_.url().str() + " (epoch " + j.epoch + ", from seq " + std::to_string(j.seq) + ")";
}

void BusSource::note(const std::string& why) {
  std::lock_guard lock(mu_);
  error_ = why;
}

void BusSource::fail(const std::string& why) {
  note(why);
  stats_.stopped = true;
  std::fprintf(stderr, "oddsrelay: stopped following the bus: %s; serving the state at seq %llu (restart to rejoin)\n",
               why.c_str(), static_cast<unsigned long long>(stats_.seq.load()));
}

bool BusSource::rejoin(const std::string& why) {
  stats_.rejoining = true;
  note(why + "; rejoining");
  const uint64_t at = stats_.seq.load(std::memory_order_relaxed);
  std::fprintf(stderr, "oddsrelay: bus: %s; rejoining from the newest snapshot\n", why.c_str());
  std::string last;
  while (!stop_.load(std::memory_order_relaxed)) {
    std::string wait_why;
    if (link_.connected()) {
      // A fresh engine: the state being served stays whole until the new
      // one has loaded and passed every check.
      auto fresh = std::make_unique<Engine>();
      bus::JoinResult j;
      bool corrupt = false;
      const bus::Join r = bus::join_log(link_, *fresh, j, wait_why, corrupt);
      if (r == bus::Join::Joined && j.epoch == epoch_ && j.seq <= at) {
        // Rejoining there would take the state back: a newer snapshot comes
        // within the ingest's cadence.
        wait_why = "the newest snapshot (seq " + std::to_string(j.seq) + ") is not past this edge's seq " +
                   std::to_string(at) + ": waiting for a newer one";
      } else if (r == bus::Join::Joined) {
        if (!pipeline_.replace_state(*fresh)) return false;
        {
          std::lock_guard lock(mu_);
          joined_ = j;
          error_ = why + "; rejoined at seq " + std::to_string(j.seq);
        }
        epoch_ = j.epoch;
        stats_.seq.store(j.seq, std::memory_order_relaxed);
        stats_.stream_seq.store(j.next_stream_seq - 1, std::memory_order_relaxed);
        stats_.rejoins.fetch_add(1, std::memory_order_relaxed);
        stats_.rejoining = false;
        std::fprintf(stderr,
                     "oddsrelay: rejoined log %s at seq %llu from a snapshot (%llu events, %llu bytes) in %.0f ms; "
                     "following from stream seq %llu\n",
                     j.epoch.c_str(), static_cast<unsigned long long>(j.seq),
                     static_cast<unsigned long long>(j.snapshot_events),
                     static_cast<unsigned long long>(j.snapshot_bytes), j.millis,
                     static_cast<unsigned long long>(j.next_stream_seq));
        return true;
      } else if (corrupt) {
        wait_why = "the newest snapshot does not load: " + wait_why;
      }
    } else {
      wait_why = "waiting for the bus";
    }
    if (wait_why != last) std::fprintf(stderr, "oddsrelay: bus: cannot rejoin yet: %s\n", wait_why.c_str());
    last = wait_why;
    for (int i = 0; i < 5 && !stop_.load(std::memory_order_relaxed); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

void BusSource::heard(uint64_t pending) {
  last_heard_ = Clock::now();
  if (pending == 0) caught_up();
}

void BusSource::caught_up() {
  if (stats_.behind.exchange(false)) {
    std::fprintf(stderr, "oddsrelay: bus: caught up at seq %llu (stream seq %llu) on %s\n",
                 static_cast<unsigned long long>(stats_.seq.load()),
                 static_cast<unsigned long long>(stats_.stream_seq.load()), link_.server().c_str());
  }
}

void BusSource::check_silence(bus::LogReader& reader, bool& open) {
  const auto now = Clock::now();
  if (now - last_heard_ < stale_after_ || now < next_check_) return;
  next_check_ = now + std::min<Clock::duration>(stale_after_ / 4, std::chrono::milliseconds(250));
  bus::StreamState st;
  std::string err;
  // Bounded tighter than other requests: this answers "is the bus there?".
  const bus::Got g = link_.connected() ? link_.stream_state(link_.url().stream, st, err, 1000) : bus::Got::Failed;
  const uint64_t at = stats_.stream_seq.load(std::memory_order_relaxed);
  if (g == bus::Got::Ok && st.last_seq <= at) {
    // A quiet log: nothing to receive. Still watched at the same pace while
    // nothing comes, so that a consumer lost meanwhile (the stream's leader
    // went: the ingest publishes again only after the election) is replaced
    // as soon as the stream moves on, not a whole silence later.
    caught_up();
    return;
  }
  if (!stats_.behind.exchange(true)) {
    stats_.stalls.fetch_add(1, std::memory_order_relaxed);
    // Named, so the text outlives the call (never a pointer into a branch's temporary).
    const std::string why =
        g == bus::Got::Ok ? "the stream is at #" + std::to_string(st.last_seq) + ", this edge at #" + std::to_string(at)
                          : "the bus does not answer (" + (err.empty() ? std::string("not connected") : err) + ")";
    std::fprintf(
        stderr, "oddsrelay: bus: nothing received for %lld ms: %s; upstream not ready\n",
        static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(now - last_heard_).count()),
        why.c_str());
  }
  if (g == bus::Got::Ok && open) {
    // The consumer went silent with its server: a new one on the server
    // the link is on now, from the message after the last one applied.
    std::fprintf(stderr, "oddsrelay: bus: recreating the consumer on %s from stream seq %llu\n", link_.server().c_str(),
                 static_cast<unsigned long long>(at + 1));
    reader.close();
    open = false;
    stats_.resubscribes.fetch_add(1, std::memory_order_relaxed);
    last_heard_ = now;  // the next one only after another silence
    // A new consumer at once: it pushes the backlog far faster than reading
    // on by sequence (a round trip per message). When none can be placed
    // (the server lost also led the cluster's metadata), the edge reads on
    // by sequence and tries again every 2 s.
    next_open_ = now;
  }
}

BusSource::Step BusSource::take(const bus::LogMessage& m, feed::FeedParser& parser) {
  const int64_t came = mono_ns();  // the message's records arrived together
  const uint64_t seq = stats_.seq.load(std::memory_order_relaxed);
  const bus::Fit f = bus::fit(m, epoch_, seq);
  if (f == bus::Fit::Old) {
    stats_.old_messages.fetch_add(1, std::memory_order_relaxed);
    heard(m.pending);
    return Step::Next;
  }
  if (f != bus::Fit::Next) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "log message #%llu (%s:%llu, %llu records) does not follow seq %llu of %s: %s",
                  static_cast<unsigned long long>(m.stream_seq), m.epoch.c_str(),
                  static_cast<unsigned long long>(m.last), static_cast<unsigned long long>(m.records),
                  static_cast<unsigned long long>(seq), epoch_.c_str(), bus::fit_name(f));
    if (f == bus::Fit::Bad) {
      fail(buf);
      return Step::Stop;
    }
    // A gap or another log: the stream moved on without this edge.
    rejoin_why_ = buf;
    return Step::Rejoin;
  }
  // Parse the whole message first: a line that is not a record would move
  // every later position, so none of the message is applied then.
  std::vector<feed::Record> recs;
  recs.reserve(m.records);
  std::string bad;
  bus::for_each_line(m.data, [&](std::string_view line) {
    if (!bad.empty()) return;
    feed::Record rec;
    if (parser.parse(line, rec) == feed::LineStatus::Record) {
      rec.arrived_ns = came;
      recs.push_back(std::move(rec));
    } else
      bad = parser.error().empty() ? "not a record" : parser.error();
  });
  if (!bad.empty()) {
    status_.malformed.fetch_add(1, std::memory_order_relaxed);
    fail("log message #" + std::to_string(m.stream_seq) + " holds a line that is not a record (" + bad + ")");
    return Step::Stop;
  }
  for (auto& rec : recs) pipeline_.push(std::move(rec));
  status_.records.fetch_add(recs.size(), std::memory_order_relaxed);
  stats_.seq.store(m.last, std::memory_order_relaxed);
  stats_.stream_seq.store(m.stream_seq, std::memory_order_relaxed);
  stats_.pending.store(m.pending, std::memory_order_relaxed);
  stats_.messages.fetch_add(1, std::memory_order_relaxed);
  heard(m.pending);
  return Step::Next;
}

BusSource::Step BusSource::read_on(feed::FeedParser& parser, Clock::time_point until, bool& progressed) {
  progressed = false;
  std::string err;
  std::vector<bus::LogMessage> batch;
  while (!stop_.load(std::memory_order_relaxed) && link_.connected() && Clock::now() < until) {
    const uint64_t from = stats_.stream_seq.load(std::memory_order_relaxed) + 1;
    bus::Got g = bus::Got::Failed;
    bool unsupported = false;
    const bool direct = Clock::now() >= direct_after_;
    if (direct) g = sequence_reader_.read(link_, from, kReadOnBatch, batch, err, unsupported);
    if (!direct || unsupported) {
      const std::string direct_err = err;
      batch.resize(1);
      g = bus::read_log_message(link_, from, batch[0], err);
      if (direct && g == bus::Got::Ok) {
        // The leader answers where no replica did: a stream made without
        // AllowDirect (by an operator, or an older oddsrelay), or replicas
        // that were all out of reach for a moment; direct gets are tried
        // again after a while, so the moment does not cost the rest.
        direct_after_ = Clock::now() + std::chrono::seconds(30);
        if (!said_one_at_a_time_)
          std::fprintf(stderr, "oddsrelay: bus: %s, but the stream's leader does; reading on one message at a time\n",
                       direct_err.c_str());
        said_one_at_a_time_ = true;
      }
    }
    if (g != bus::Got::Ok) {
      if (g == bus::Got::Missing) {
        // Read to the stream's end: nothing is pending (each message read
        // on said 1, not knowing), whether or not this round applied any.
        stats_.pending.store(0, std::memory_order_relaxed);
        if (progressed) heard(0);
      }
      return Step::Next;
    }
    for (bus::LogMessage& lm : batch) {
      lm.pending = 1;  // unknown until the next read finds nothing
      const Step s = take(lm, parser);
      if (s != Step::Next) return s;
      stats_.read_on_messages.fetch_add(1, std::memory_order_relaxed);
      if (!progressed) stats_.read_on.fetch_add(1, std::memory_order_relaxed);
      progressed = true;
    }
  }
  return Step::Next;
}

void BusSource::run() {
  auto parser = std::make_unique<feed::FeedParser>();
  parser->keep_text(pipeline_.record_text());
  bus::LogReader reader;
  bus::LogMessage m;
  bool open = false;
  std::string err, last_err;
  Step step = Step::Next;
  while (!stop_.load(std::memory_order_relaxed) && step != Step::Stop) {
    if (step == Step::Rejoin) {
      reader.close();
      open = false;
      if (!rejoin(rejoin_why_)) break;
      step = Step::Next;
    }
    if (!open) {
      // The next message after the last one applied: after a reader failure
      // nothing is skipped or applied twice.
      const bool try_open = link_.connected() && Clock::now() >= next_open_;
      if (try_open && reader.open(link_, stats_.stream_seq.load() + 1, err)) {
        open = true;
        last_err.clear();
        continue;
      }
      if (try_open) {
        if (err != last_err)
          std::fprintf(stderr, "oddsrelay: bus: %s; reading on by sequence meanwhile\n", err.c_str());
        last_err = err;
        next_open_ = Clock::now() + std::chrono::seconds(2);
      }
      bool progressed = false;
      step = read_on(*parser, next_open_, progressed);
      check_silence(reader, open);  // is the stream moving without this edge?
      // Polled at the stream's end while no consumer pushes: a short wait.
      if (!progressed) std::this_thread::sleep_for(std::chrono::milliseconds(link_.connected() ? 20 : 100));
      continue;
    }
    auto r = reader.next(m, 100, err);
    if (r == bus::LogReader::Next::Timeout) {
      check_silence(reader, open);
      continue;
    }
    if (r == bus::LogReader::Next::Failed) {
      std::fprintf(stderr, "oddsrelay: bus: %s; reading again from stream seq %llu\n", err.c_str(),
                   static_cast<unsigned long long>(stats_.stream_seq.load() + 1));
      reader.close();
      open = false;
      stats_.resubscribes.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    step = take(m, *parser);
  }
  reader.close();
  sequence_reader_.close();
}

}  // namespace oddsrelay
