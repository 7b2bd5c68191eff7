#include "tools/oddsfeed/bus_commands.h"

#include <cinttypes>
#include <cstdio>
#include <memory>
#include <thread>

#include "engine/bus/bus_join.h"
#include "engine/bus/bus_publisher.h"
#include "engine/bus/log_reader.h"
#include "engine/bus/snapshot_transfer.h"
#include "engine/core/state_digest.h"
#include "engine/storage/data_dir.h"
#include "engine/storage/feed_file.h"
#include "protocol/feed_reader.h"

namespace oddsrelay {

namespace {

int fail(const std::string& msg) {
  std::fprintf(stderr, "oddsfeed: %s\n", msg.c_str());
  return 1;
}

bool connect(bus::NatsLink& link, const std::string& url, std::string& err) {
  bus::BusUrl u;
  if (!bus::parse_bus_url(url, u, err) || !link.open(u, "oddsfeed", err)) return false;
  if (!link.wait_connected(5000)) return err = "no NATS server at " + u.server(), false;
  return true;
}

// Applies the log from stream sequence `from` to the stream's last message
// (or to position `upto`) straight into `engine`, checking every position.
bool catch_up(bus::NatsLink& link, Engine& engine, const std::string& epoch, uint64_t from, uint64_t upto,
              uint64_t& messages, std::string& err) {
  bus::StreamState st;
  if (link.stream_state(link.url().stream, st, err) != bus::Got::Ok)
    return err.empty() ? (err = "no stream", false) : false;
  if (from > st.last_seq) return true;
  bus::LogReader reader;
  if (!reader.open(link, from, err)) return false;
  auto parser = std::make_unique<feed::FeedParser>();
  bus::LogMessage m;
  uint64_t seq = engine.current()->seq;
  while (seq < upto) {
    auto r = reader.next(m, 10'000, err);
    if (r == bus::LogReader::Next::Failed) return false;
    if (r == bus::LogReader::Next::Timeout) return err = "the log stream stopped delivering before its end", false;
    bus::Fit f = bus::fit(m, epoch, seq);
    if (f == bus::Fit::Old) continue;
    if (f != bus::Fit::Next)
      return err = "log message #" + std::to_string(m.stream_seq) + " does not follow seq " + std::to_string(seq) +
                   ": " + bus::fit_name(f),
             false;
    std::string bad;
    bus::for_each_line(m.data, [&](std::string_view line) {
      if (!bad.empty() || seq >= upto) return;
      feed::Record rec;
      if (parser->parse(line, rec) != feed::LineStatus::Record) {
        bad = parser->error();
        return;
      }
      if (engine.apply(std::move(rec)) == ApplyResult::Applied)
        ++seq;
      else
        bad = "a record the engine skips (its position would be lost)";
    });
    if (!bad.empty()) return err = "log message #" + std::to_string(m.stream_seq) + ": " + bad, false;
    engine.commit();
    ++messages;
    if (m.stream_seq >= st.last_seq) break;
  }
  return true;
}

// Waits for the bus to store everything up to `seq` (no progress for 30 s:
// gives up).
bool wait_stored(bus::BusPublisher& pub, uint64_t seq, std::string& err) {
  uint64_t last_acked = 0;
  auto last_progress = std::chrono::steady_clock::now();
  while (pub.stats().acked_seq.load() < seq) {
    if (pub.state() == "fenced") {
      err = "not published: " + pub.last_error();
      return false;
    }
    if (pub.stats().acked_seq.load() != last_acked) {
      last_acked = pub.stats().acked_seq.load();
      last_progress = std::chrono::steady_clock::now();
    } else if (std::chrono::steady_clock::now() - last_progress > std::chrono::seconds(30)) {
      err = "the bus stored up to seq " + std::to_string(last_acked) + " of " + std::to_string(seq);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// The final state as a snapshot, so an edge started later joins at once;
// only when the stream's last message is that state's.
void put_final_snapshot(bus::NatsLink& link, const Snapshot& end) {
  bus::StreamState st;
  std::string err;
  if (link.stream_state(link.url().stream, st, err) != bus::Got::Ok) return;
  bus::StoredMsg last;
  std::string epoch;
  uint64_t last_seq = 0;
  bus::SnapshotHead h;
  if (link.get_msg(link.url().stream, st.last_seq, last, err) == bus::Got::Ok &&
      bus::parse_msg_id(last.msg_id, epoch, last_seq) && epoch == end.epoch && last_seq == end.seq &&
      !bus::put_snapshot(link, end, st.last_seq, h, err))
    std::fprintf(stderr, "oddsfeed: final snapshot not published: %s\n", err.c_str());
}

}  // namespace

int bus_digest(const std::string& url, uint64_t upto) {
  bus::NatsLink link;
  std::string err;
  if (!connect(link, url, err)) return fail(err);
  Engine engine;
  bus::JoinResult j;
  bool corrupt = false;
  if (bus::join_log(link, engine, j, err, corrupt) != bus::Join::Joined) return fail("cannot join: " + err);
  if (upto < j.seq)
    return fail("the bus's newest snapshot is at seq " + std::to_string(j.seq) + ", past --seq " +
                std::to_string(upto));
  uint64_t messages = 0;
  if (!catch_up(link, engine, j.epoch, j.next_stream_seq, upto, messages, err)) return fail(err);
  SnapshotPtr s = engine.current();
  std::printf("epoch=%s seq=%" PRIu64 " joined=%" PRIu64 " snapshot=%s messages=%" PRIu64 " digest=%016" PRIx64 "\n",
              s->epoch.c_str(), s->seq, j.seq, j.from_snapshot ? "yes" : "no", messages, state_digest(*s));
  return 0;
}

int bus_publish(const std::string& input, const std::string& url, int replicas) {
  bus::NatsLink link;
  std::string err;
  if (!connect(link, url, err)) return fail(err);
  bus::StreamSettings streams;
  streams.replicas = replicas;
  if (!link.ensure_streams(streams, err)) return fail(err);
  bus::StreamState st;
  if (link.stream_state(link.url().stream, st, err) != bus::Got::Ok) return fail(err);
  // A new log on an empty stream; otherwise this continues the log there,
  // from its state (so a record the engine would skip is never published).
  Engine engine;
  if (st.last_seq == 0) {
    engine.set_epoch(new_epoch());
    engine.publish_restored();
  } else {
    bus::JoinResult j;
    bool corrupt = false;
    if (bus::join_log(link, engine, j, err, corrupt) != bus::Join::Joined)
      return fail("cannot join the log there: " + err);
    uint64_t messages = 0;
    if (!catch_up(link, engine, j.epoch, j.next_stream_seq, UINT64_MAX, messages, err)) return fail(err);
  }
  const uint64_t start = engine.current()->seq;
  FeedFileReader reader;
  if (!reader.open(input == "-" ? "/dev/stdin" : input, err)) return fail(err);
  reader.on_problem([&](uint64_t line, feed::LineStatus, const std::string& why) {
    std::fprintf(stderr, "oddsfeed: %s line %" PRIu64 " skipped: %s\n", input.c_str(), line, why.c_str());
  });

  bus::PublisherOptions po;
  po.streams = streams;
  po.buffer_bytes = size_t{1} << 40;  // this tool waits for the bus instead of dropping
  bus::BusPublisher pub(link, po, engine.current());
  if (!pub.start(err)) return fail(err);
  feed::Record r;
  uint64_t read = 0, skipped = 0, in_batch = 0;
  auto flush = [&] {
    if (BatchPtr b = engine.commit()) pub.on_batch(b);
    in_batch = 0;
    // Keep pace with the bus: at most 64 MiB waiting.
    while (pub.stats().buffered_bytes.load() > (64u << 20) && pub.state() != "fenced")
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
  };
  while (reader.next(r)) {
    ++read;
    if (engine.apply(std::move(r)) == ApplyResult::Applied)
      ++in_batch;
    else
      ++skipped;
    r = feed::Record{};
    if (in_batch == 256) flush();
  }
  flush();
  if (!reader.fatal().empty()) return fail(reader.fatal());
  const SnapshotPtr end = engine.current();
  if (!wait_stored(pub, end->seq, err)) return fail(err);
  pub.stop(5000);
  if (end->seq > start) put_final_snapshot(link, *end);
  std::printf("published=%" PRIu64 " skipped=%" PRIu64 " malformed=%" PRIu64 " from=%" PRIu64 " epoch=%s seq=%" PRIu64
              " messages=%" PRIu64 " digest=%016" PRIx64 "\n",
              end->seq - start, skipped, reader.stats().malformed, start + 1, end->epoch.c_str(), end->seq,
              pub.stats().messages.load(), state_digest(*end));
  return 0;
}

}  // namespace oddsrelay
