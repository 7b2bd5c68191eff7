// oddsfeed: small CLI over feed-format files (docs/feed-format.md), so perf work
// and debugging have files to replay and a way to look inside them.
//   oddsfeed gen     write a capture from the simulator (virtual time)
//   oddsfeed inspect counts per op and sport, time span, bad lines
//   oddsfeed digest  replay into a fresh engine, print the state digest
//   oddsfeed publish put records on the bus (tools/oddsfeed/bus_commands.h)
//   oddsfeed history GET /v1/odds/history's answer at the end of a capture
//                    (tools/oddsfeed/history_command.h)
// inspect and digest read a data dir (snapshot + journal) as well as a single
// file; digest reads the log on the bus too.
#include <sys/stat.h>
#include <zlib.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/core/engine.h"
#include "engine/core/state_digest.h"
#include "engine/sources/read_ahead.h"
#include "engine/sources/simulator.h"
#include "engine/storage/data_dir.h"
#include "engine/storage/feed_file.h"
#include "engine/storage/snapshot_file.h"
#include "oddsrelay_version.h"
#include "protocol/bus_contract.h"
#include "protocol/feed_writer.h"
#include "tools/oddsfeed/bus_commands.h"
#include "tools/oddsfeed/history_command.h"
#include "tools/oddsfeed/record_progress.h"
#include "tools/oddsrelay/cli.h"

using namespace oddsrelay;

namespace {

const char* const kFeedUsage = R"(Usage: oddsfeed COMMAND [options]

Commands:
  gen -o FILE [--records N] [--span DURATION] [--sim SPEC] [--start MS]
        Write N records (default 1000000) from the simulator to FILE (gzip
        when FILE ends in .gz; `-` for stdout). SPEC as in `oddsrelay --feed
        sim:SPEC`, e.g. seed=7,events=2000,rate=1000,tick=10000,correct=50.
        --span: instead, every record until the feed's time covers DURATION
        (30d, 96h, 90m, 30s; --records still caps it). Virtual time starts
        at MS (default 1767225600000, 2026-01-01), so the same options give
        the same file.
  inspect FILE|DIR [--retain-ended DURATION]
        Counts per op and per sport, events, time span, malformed lines.
        Progress every million records on stderr (inspect, digest and
        history of a FILE; ODDSFEED_PROGRESS_EVERY=N: every N).
        For an oddsrelay --data-dir: its epoch, snapshots (with the horizon
        each was kept with) and journal segments, and the position and
        digest it recovers to.
  digest FILE|DIR|nats://HOST:PORT[,HOST:PORT...]/STREAM [--seq N] [--retain-ended DURATION]
        Replay FILE into a fresh engine (up to log position N: the first N
        applied records); print seq and the state digest that `oddsrelay`
        prints when it stops (for identity checks). For a data dir: the
        state a restart would recover, without changing the dir. For a bus
        URL: the log there, joined like an edge does (newest snapshot, then
        the stream), at its newest position or at N. The retention horizon
        must be the server's (default: for a data dir, the one its newest
        snapshot was kept with; else 96h, as there).
  publish FILE|- nats://HOST:PORT[,HOST:PORT...]/STREAM [--publish-replicas N]
        Put the records of FILE (or standard input) on the bus's log stream
        (docs/bus.md): a new log on an empty stream, else the log there
        continues. Records the engine would skip are not published. Prints
        the positions, epoch and the state digest an edge will reach.
        Missing streams are created, as `oddsrelay --publish` does, with N
        replicas (1..5, default 1; 3 on a three-server cluster); existing
        ones are used as they are, with a warning when made otherwise.
  history FILE --id EVENT [--market M] [--line L] [--outcome O] [--from MS]
        [--to MS] [--interval raw|1s|10s|1m|5m|15m|1h] [--format json|csv]
        [--retain-ended DURATION]
        Replay FILE through the server's engine and odds history (no memory
        bound) and print the body GET /v1/odds/history gives for the same
        query once the server has applied all of FILE (docs/api.md "Odds
        history"): the same bytes, no newline added, but for "epoch",
        which is "" here (a capture has no log epoch; a server draws one at
        each start). The event may be named in any form the server takes.
        Unknown event: exit 1. Progress every million records on stderr.
        Memory grows with FILE (nothing is dropped).
  --version
  --help
)";

int fail(const std::string& msg) {
  std::fprintf(stderr, "oddsfeed: %s (see --help)\n", msg.c_str());
  return 2;
}

// gen's command line.
struct GenOptions {
  std::string out_path, sim_spec = "sim";
  uint64_t records = 1'000'000;
  bool records_given = false;
  int64_t start = 1767225600000, span_ms = 0;
};

// -1 to go on, else the exit code.
int parse_gen(int argc, char** argv, GenOptions& g) {
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    auto val = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if ((a == "-o" || a == "--out") && (v = val()))
      g.out_path = v;
    else if (a == "--records" && (v = val()))
      g.records = std::strtoull(v, nullptr, 10), g.records_given = true;
    else if (a == "--span" && (v = val())) {
      if (!parse_duration(v, g.span_ms)) return fail(std::string("gen: bad --span ") + v + " (e.g. 30d, 96h)");
    } else if (a == "--sim" && (v = val()))
      g.sim_spec = std::string("sim:") + v;
    else if (a == "--seed" && (v = val()))
      g.sim_spec += std::string(g.sim_spec == "sim" ? ":" : ",") + "seed=" + v;
    else if (a == "--start" && (v = val()))
      g.start = std::strtoll(v, nullptr, 10);
    else
      return fail("gen: bad or incomplete option '" + a + "'");
  }
  if (g.out_path.empty()) return fail("gen: -o FILE is required");
  if (g.records == 0) return fail("gen: --records must be positive");
  if (g.span_ms > 0 && !g.records_given) g.records = UINT64_MAX;
  return -1;
}

// Where gen writes: gzip (a .gz name), standard output (-) or a plain file.
class GenOutput {
 public:
  bool open(const std::string& path) {
    if (path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0)
      zf_ = gzopen(path.c_str(), "wb6");
    else
      f_ = path == "-" ? stdout : std::fopen(path.c_str(), "wb");
    return zf_ || f_;
  }
  void write(const std::string& s) {
    if (zf_)
      gzwrite(zf_, s.data(), static_cast<unsigned>(s.size()));
    else
      std::fwrite(s.data(), 1, s.size(), f_);
  }
  void close() {
    if (zf_)
      gzclose(zf_);
    else if (f_ == stdout)
      std::fflush(f_);
    else
      std::fclose(f_);
  }

 private:
  gzFile zf_ = nullptr;
  FILE* f_ = nullptr;
};

// The simulator's records, header first, until --records or --span; returns how many.
uint64_t generate(const GenOptions& g, const sim::SimOptions& sim_opts, GenOutput& out) {
  std::string buf;
  feed::write_header("s7", buf);
  buf += '\n';
  sim::Simulator sim(sim_opts);
  std::vector<feed::Record> recs;
  sim.open(g.start, g.start, recs);
  uint64_t n = 0, next_report = 250'000;
  const int64_t until = g.span_ms > 0 ? g.start + g.span_ms : INT64_MAX;
  while (n < g.records && sim.now() <= until) {
    for (auto& r : recs) {
      if (n == g.records) break;
      feed::write_record(r, buf);
      buf += '\n';
      ++n;
    }
    recs.clear();
    if (buf.size() > (1 << 20)) {
      out.write(buf);
      buf.clear();
    }
    if (n >= next_report) {
      if (g.span_ms > 0)
        std::fprintf(stderr, "oddsfeed: %" PRIu64 " records, %.1f of %.1f days\n", n,
                     static_cast<double>(sim.now() - g.start) / 86'400'000,
                     static_cast<double>(g.span_ms) / 86'400'000);
      else
        std::fprintf(stderr, "oddsfeed: %" PRIu64 " / %" PRIu64 " records\n", n, g.records);
      next_report += g.span_ms > 0 ? 5'000'000 : 250'000;
    }
    if (n < g.records) sim.step(sim.now() + static_cast<int64_t>(sim.step_ms()), recs);
  }
  out.write(buf);
  return n;
}

int gen(int argc, char** argv) {
  GenOptions g;
  if (int rc = parse_gen(argc, argv, g); rc >= 0) return rc;
  FeedSpec spec;
  std::string err;
  if (!parse_feed_spec(g.sim_spec, spec, err)) return fail(err);
  GenOutput out;
  if (!out.open(g.out_path)) return fail("cannot write " + g.out_path + ": " + std::strerror(errno));
  const uint64_t n = generate(g, spec.sim, out);
  out.close();
  std::fprintf(stderr, "oddsfeed: wrote %" PRIu64 " records to %s\n", n, g.out_path.c_str());
  return 0;
}

int inspect(const std::string& path) {
  FeedFileReader reader;
  std::string err;
  if (!reader.open(path, err)) return fail(err);
  uint64_t shown = 0;
  reader.on_problem([&](uint64_t line, feed::LineStatus, const std::string& why) {
    if (++shown <= 10) std::printf("line %" PRIu64 ": %s\n", line, why.c_str());
  });
  std::map<std::string, uint64_t> per_op;
  std::map<int32_t, uint64_t> per_sport;
  std::unordered_map<uint64_t, int32_t> sport_of;
  int64_t first = 0, last = 0;
  bool any = false;
  feed::Record r;
  RecordProgress progress;
  while (reader.next(r)) {
    progress.at(reader.stats().records);
    per_op[feed::op_name(r.op())]++;
    if (r.op() == feed::Op::Event)
      sport_of[r.number] = std::get<std::shared_ptr<const feed::EventObject>>(r.body)->sport;
    auto it = sport_of.find(r.number);
    per_sport[it == sport_of.end() ? 0 : it->second]++;
    if (!any) first = last = r.at;
    first = std::min(first, r.at);
    last = std::max(last, r.at);
    any = true;
  }
  const auto& st = reader.stats();
  std::printf("file: %s\nlines: %" PRIu64 "\nrecords: %" PRIu64 "\nmalformed: %" PRIu64 "\nunknown_ops: %" PRIu64
              "\nunknown_fields: %" PRIu64 "\nevents: %zu\n",
              path.c_str(), st.lines, st.records, st.malformed, st.unknown_ops, st.unknown_fields, sport_of.size());
  if (any)
    std::printf("time span: %" PRId64 " .. %" PRId64 " (%.1f s)\n", first, last,
                static_cast<double>(last - first) / 1000);
  std::printf("per op:\n");
  for (auto& [op, n] : per_op) std::printf("  %-8s %" PRIu64 "\n", op.c_str(), n);
  std::printf("per sport (0 = records before any event record):\n");
  for (auto& [s, n] : per_sport) std::printf("  %-4d %" PRIu64 "\n", s, n);
  if (!reader.fatal().empty()) {
    std::printf("stopped: %s\n", reader.fatal().c_str());
    return 1;
  }
  return 0;
}

bool is_dir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

int64_t g_retain_ended_ms = kDefaultRetainEndedMs;  // --retain-ended, for every replay here
bool g_retain_given = false;

int digest_dir(const std::string& dir) {
  Engine engine;
  int64_t horizon = g_retain_ended_ms;
  // Without --retain-ended, the horizon the newest snapshot was kept with.
  DataDirFiles files = list_data_dir(dir);
  SnapshotInfo head;
  std::string err;
  if (!g_retain_given && !files.snapshots.empty() &&
      read_snapshot_header(snapshot_path(dir, files.snapshots.back()), head, err) && head.retain_ended_ms > 0)
    horizon = head.retain_ended_ms;
  engine.set_retain_ended_ms(horizon);
  try {
    DataDirRecovery r = recover_data_dir(dir, engine, true);
    SnapshotPtr s = engine.current();
    std::printf("epoch=%s seq=%" PRIu64 " snapshot=%" PRIu64 " replayed=%" PRIu64 " retain_ended=%" PRId64
                "s digest=%016" PRIx64 "\n",
                r.epoch.c_str(), s->seq, r.snapshot_seq, r.replayed, horizon / 1000, state_digest(*s));
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  return 0;
}

int digest(const std::string& path, uint64_t upto) {
  if (is_dir(path)) return digest_dir(path);
  FeedFileReader reader;
  std::string err;
  if (!reader.open(path, err)) return fail(err);
  Engine engine;
  engine.set_retain_ended_ms(g_retain_ended_ms);
  // Parsing runs a few chunks ahead on its own thread; batches stay 256
  // records (the digest does not depend on them, but the output is the
  // same as a replay's). With --seq, `malformed` counts the lines read
  // ahead too.
  ReadAhead ahead(reader);
  std::vector<feed::Record> chunk;
  uint64_t n = 0;
  RecordProgress progress;
  while (engine.applied() < upto && ahead.next(chunk))
    for (auto& r : chunk) {
      if (engine.applied() >= upto) break;
      engine.apply(std::move(r));
      if (++n % 256 == 0) engine.commit();
      progress.at(n);
    }
  ahead.finish();
  engine.commit();
  if (!reader.fatal().empty()) return fail(reader.fatal());
  SnapshotPtr s = engine.current();
  std::printf("records=%" PRIu64 " seq=%" PRIu64 " malformed=%" PRIu64 " digest=%016" PRIx64 "\n", n, s->seq,
              reader.stats().malformed, state_digest(*s));
  return 0;
}

int inspect_dir(const std::string& dir) {
  DataDirFiles f = list_data_dir(dir);
  std::printf("data dir: %s\nepoch: %s\n", dir.c_str(), f.epoch.empty() ? "(none)" : f.epoch.c_str());
  for (uint64_t seq : f.snapshots) {
    SnapshotInfo info;
    std::string err;
    if (check_snapshot_file(snapshot_path(dir, seq), info, err))
      std::printf("snapshot seq=%" PRIu64 " events=%" PRIu64 " bytes=%" PRIu64 " evicted=%" PRIu64
                  " retain_ended=%" PRId64 "s\n",
                  seq, info.events, info.bytes, info.evicted, info.retain_ended_ms / 1000);
    else
      std::printf("snapshot seq=%" PRIu64 " UNUSABLE: %s\n", seq, err.c_str());
  }
  for (uint64_t first : f.segments) {
    struct stat st {};
    ::stat(segment_path(dir, first).c_str(), &st);
    std::printf("journal first=%" PRIu64 " bytes=%lld\n", first, static_cast<long long>(st.st_size));
  }
  return digest_dir(dir);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return fail("missing command");
  std::string cmd = argv[1];
  // `oddsfeed gen --help` asks for help, not for a file named --help.
  bool help = cmd == "help";
  for (int i = 1; i < argc; ++i) help = help || std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0;
  if (help) {
    std::fputs(kFeedUsage, stdout);
    return 0;
  }
  if (cmd == "--version") {
    std::printf("oddsfeed %s (commit %s)\n", ODDSRELAY_VERSION, ODDSRELAY_COMMIT);
    return 0;
  }
  if (cmd == "gen") return gen(argc - 2, argv + 2);
  // --retain-ended DURATION anywhere after the command, for inspect, digest and history.
  std::vector<char*> args(argv, argv + argc);
  for (size_t i = 2; i < args.size(); ++i)
    if (std::strcmp(args[i], "--retain-ended") == 0) {
      if (i + 1 >= args.size() || !parse_duration(args[i + 1], g_retain_ended_ms))
        return fail("bad or missing --retain-ended value (e.g. 96h, 90m, 30s)");
      g_retain_given = true;
      args.erase(args.begin() + static_cast<ptrdiff_t>(i), args.begin() + static_cast<ptrdiff_t>(i) + 2);
      break;
    }
  // --publish-replicas N after `publish`: the copies a created stream gets.
  int replicas = 1;
  for (size_t i = 2; cmd == "publish" && i < args.size(); ++i)
    if (std::strcmp(args[i], "--publish-replicas") == 0) {
      char* end = nullptr;
      const long n = i + 1 < args.size() ? std::strtol(args[i + 1], &end, 10) : 0;
      if (!end || *end != '\0' || n < 1 || n > 5) return fail("bad or missing --publish-replicas value (1..5)");
      replicas = static_cast<int>(n);
      args.erase(args.begin() + static_cast<ptrdiff_t>(i), args.begin() + static_cast<ptrdiff_t>(i) + 2);
      break;
    }
  argc = static_cast<int>(args.size());
  argv = args.data();
  if (cmd == "history") return history_command(argc - 2, argv + 2, g_retain_ended_ms);
  if (cmd == "inspect" && argc == 3) return is_dir(argv[2]) ? inspect_dir(argv[2]) : inspect(argv[2]);
  const bool bus = argc >= 3 && std::strncmp(argv[2], "nats://", 7) == 0;
  // A malformed bus URL (a server list with a stray comma, a missing
  // stream) stops here, before any connection is tried.
  if (const char* url = cmd == "publish" && argc == 4 ? argv[3] : bus ? argv[2] : nullptr) {
    bus::BusUrl u;
    std::string why;
    if (!bus::parse_bus_url(url, u, why)) return fail("bad bus URL " + std::string(url) + ": " + why);
  }
  if (cmd == "publish" && argc == 4) return bus_publish(argv[2], argv[3], replicas);
  if (cmd == "digest" && argc == 3) return bus ? bus_digest(argv[2], UINT64_MAX) : digest(argv[2], UINT64_MAX);
  if (cmd == "digest" && argc == 5 && std::strcmp(argv[3], "--seq") == 0) {
    char* end = nullptr;
    uint64_t n = std::strtoull(argv[4], &end, 10);
    if (!end || *end != '\0' || argv[4][0] == '\0') return fail(std::string("bad --seq ") + argv[4]);
    return bus ? bus_digest(argv[2], n) : digest(argv[2], n);
  }
  return fail("unknown command or arguments: " + cmd);
}
