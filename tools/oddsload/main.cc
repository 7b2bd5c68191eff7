// oddsload: the subscriber/load client of the relay benchmarks (perf/relay)
// and a quick way to watch the streams. Opens N WebSocket connections,
// parses every frame, checks that /pt-ws INFO frames leave no seq gap, and
// reports frames/s, bytes/s and delivery latency percentiles. Runs for a
// bounded time and stops by itself; loopback or any host you name.
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>

#include "oddsrelay_version.h"
#include "tools/oddsload/load_client.h"

using namespace oddsrelay::load;

namespace {

const char* const kUsage = R"(Usage: oddsload [options]

Subscribes N WebSocket clients to an oddsrelay stream for a bounded time and
reports what they received.

Options:
  --url http://HOST:PORT  server (default http://127.0.0.1:8080; --connect
                        HOST:PORT says the same)
  --path PATH           stream path (default /pt-ws?protocol=v2, or /pt-sse
                        with --sse; or /ws)
  --key KEY             API key (appended as api_key=)
  --events LIST         /pt-ws or /pt-sse events= filter (event ids, commas)
  --markets LIST        markets= filter (market ids, commas)
  --conflate-ms N       conflate_ms=N: the latest state at most every N ms
  --verify              verify=1: every INFO carries the state digest
  --compress            offer permessage-deflate and inflate what comes
                        compressed (the wire bytes are reported beside the
                        frame bytes)
  --filter-file FILE    one query per line (e.g. events=ID,ID&markets=1001):
                        subscriber i appends line i mod the number of
                        lines, so one run holds many distinct filters
  --sse                 subscribe to /pt-sse (Server-Sent Events) instead
  --connections N       subscribers (default 100)
  --duration SECONDS    total run time, then every client closes (default 10)
  --warmup SECONDS      latency is counted after this (default 1, and never
                        before every connection has had time to open)
  --connect-rate N      new connections per second (default 2000)
  --progress SECONDS    progress line on stderr (default 1; 0 = off)
  --json                print the summary as one JSON object (frames and
                        bytes per subscriber per second included)
Baseline mode (perf/relay/run.sh, nchan):
  --forward HOST:PORT/PATH   one extra /pt-ws subscriber POSTs every frame it
                        gets to this HTTP publisher, stamping INFO `at` with
                        the time it publishes
  --subscribe HOST:PORT/PATH subscribers connect here instead (no key)
  --version             the version and the commit it was built from
  --help                this text

Latency is now - the arrival of the group the INFO frame closes: its
`arrived_us` (the server's microsecond stamp of when the group's first
record reached it) where the server sends one, else its `at` (the feed's
milliseconds, up to 1 ms of quantisation), counted on the INFOs that close
at least one evt:/odds: frame for that subscriber (a group that brought it
nothing delivered no change; a filtered stream's INFO of such groups may
wait up to 100 ms); /ws: `ts` of live_update and
market messages. Where the INFO carries the server's stamps (applied_us,
encoded_us), the latency is also reported per stage in microseconds:
record->engine (arrival to the engine having applied the group: queueing
and batching), engine->relay (to the relay having encoded it) and
relay->subscriber (to this client parsing the INFO). --json adds them as
"latency_us":{"total":{...},"record_engine":{...},...}.
)";

bool split_hostport(std::string_view s, std::string& host, uint16_t& port, std::string* path) {
  size_t slash = s.find('/');
  if (path) *path = slash == std::string_view::npos ? "/" : std::string(s.substr(slash));
  s = s.substr(0, slash);
  size_t colon = s.rfind(':');
  if (colon == std::string_view::npos) return false;
  host = std::string(s.substr(0, colon));
  long p = std::strtol(std::string(s.substr(colon + 1)).c_str(), nullptr, 10);
  if (p <= 0 || p > 65535) return false;
  port = static_cast<uint16_t>(p);
  return true;
}

// http://HOST:PORT[/]
bool split_url(std::string_view s, std::string& host, uint16_t& port) {
  if (!s.starts_with("http://")) return false;
  s.remove_prefix(7);
  if (s.ends_with("/")) s.remove_suffix(1);
  return s.find('/') == std::string_view::npos && split_hostport(s, host, port, nullptr);
}

std::string stage_json(const Histogram& h) {
  char b[200];
  std::snprintf(b, sizeof b,
                "{\"p50\":%" PRIu64 ",\"p99\":%" PRIu64 ",\"p999\":%" PRIu64 ",\"max\":%" PRIu64 ",\"samples\":%" PRIu64
                "}",
                h.quantile(0.5), h.quantile(0.99), h.quantile(0.999), h.max(), h.count());
  return b;
}

void stage_line(const char* name, const Histogram& h) {
  std::printf("  %-18s us: p50 %" PRIu64 "  p99 %" PRIu64 "  p99.9 %" PRIu64 "  max %" PRIu64 "\n", name,
              h.quantile(0.5), h.quantile(0.99), h.quantile(0.999), h.max());
}

[[noreturn]] void usage_error(const std::string& msg) {
  std::fprintf(stderr, "oddsload: %s (see --help)\n", msg.c_str());
  std::exit(2);
}

double number(const std::string& a, const char* v, double lo, double hi) {
  char* end = nullptr;
  double d = std::strtod(v, &end);
  if (*v == '\0' || *end != '\0' || d < lo || d > hi) {
    char b[64];
    std::snprintf(b, sizeof b, "' (%g..%g)", lo, hi);
    usage_error("bad " + a + " '" + v + b);
  }
  return d;
}

struct Args {
  LoadOptions o;
  bool json = false, path_given = false;
  std::string query;  // events=, markets=, conflate_ms=, verify= to append to the path
};

// An option that takes a value; false if `a` is none of them.
bool value_option(const std::string& a, const char* v, Args& x) {
  LoadOptions& o = x.o;
  if (a == "--connect" || a == "--url") {
    if (a == "--connect" ? !split_hostport(v, o.host, o.port, nullptr) : !split_url(v, o.host, o.port))
      usage_error("bad " + a + (a == "--url" ? " (http://HOST:PORT)" : " (HOST:PORT)"));
  } else if (a == "--path") {
    o.path = v;
    x.path_given = true;
  } else if (a == "--key") {
    o.api_key = v;
  } else if (a == "--events" || a == "--markets" || a == "--conflate-ms") {
    if (a == "--conflate-ms") number(a, v, 0, 60000);
    x.query.append("&").append(a == "--conflate-ms" ? "conflate_ms" : a.c_str() + 2).append("=").append(v);
  } else if (a == "--filter-file") {
    std::ifstream in(v);
    if (!in) usage_error(std::string("cannot read --filter-file ") + v);
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) o.queries.push_back(line);
    if (o.queries.empty()) usage_error(std::string("no query in --filter-file ") + v);
  } else if (a == "--connections") {
    o.connections = static_cast<uint32_t>(number(a, v, 1, 100000));
  } else if (a == "--duration") {
    o.duration_s = number(a, v, 0.1, 86400);
  } else if (a == "--warmup") {
    o.warmup_s = number(a, v, 0, 3600);
  } else if (a == "--connect-rate") {
    o.connect_rate = static_cast<uint32_t>(number(a, v, 1, 1e6));
  } else if (a == "--progress") {
    o.progress_s = number(a, v, 0, 3600);
  } else if (a == "--forward") {
    o.forward = true;
    if (!split_hostport(v, o.forward_host, o.forward_port, &o.forward_path))
      usage_error("bad --forward (HOST:PORT/PATH)");
  } else if (a == "--subscribe") {
    std::string host;
    if (!split_hostport(v, host, o.subscribe_port, &o.subscribe_path)) usage_error("bad --subscribe (HOST:PORT/PATH)");
  } else {
    return false;
  }
  return true;
}

// The options; exits on --help, --version or a mistake.
Args parse_args(int argc, char** argv) {
  Args x;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (a == "--version") {
      std::printf("oddsload %s (commit %s)\n", ODDSRELAY_VERSION, ODDSRELAY_COMMIT);
      std::exit(0);
    } else if (a == "--json" || a == "--compress" || a == "--sse") {
      (a == "--json" ? x.json : a == "--compress" ? x.o.compress : x.o.sse) = true;
    } else if (a == "--verify") {
      x.query.append("&verify=1");
    } else if (a.starts_with("--") && i + 1 < argc && value_option(a, argv[i + 1], x)) {
      ++i;
    } else {
      usage_error(i + 1 >= argc && a.starts_with("--") ? a + " needs a value or is unknown"
                                                       : "unknown option '" + a + "'");
    }
  }
  if (x.o.sse && (x.o.forward || x.o.subscribe_port)) usage_error("--sse is not for the baseline mode");
  if (x.o.sse && !x.path_given) x.o.path = "/pt-sse";
  if (!x.query.empty()) {  // each item starts with '&'
    if (x.o.path.find('?') == std::string::npos) x.query[0] = '?';
    x.o.path += x.query;
  }
  return x;
}

void print_json(const LoadOptions& o, const LoadResult& r) {
  const double s = r.seconds > 0 ? r.seconds : 1, n = r.connected ? r.connected : 1;
  auto ms = [](uint64_t us) { return static_cast<double>(us) / 1000.0; };
  // Microseconds, the whole span and per stage (stages only where the
  // server stamps its INFOs).
  std::string us = "{\"total\":" + stage_json(r.latency);
  if (r.record_engine.count()) {
    us += ",\"record_engine\":" + stage_json(r.record_engine) + ",\"engine_relay\":" + stage_json(r.engine_relay) +
          ",\"relay_subscriber\":" + stage_json(r.relay_subscriber);
  }
  us += "}";
  std::printf(
      "{\"connections\":%u,\"connected\":%u,\"compressed\":%u,\"failed\":%u,\"closed_early\":%u,\"seconds\":%.2f,"
      "\"frames\":%" PRIu64
      ",\"frames_per_s\":%.0f,\"bytes_per_s\":%.0f,\"wire_bytes_per_s\":%.0f,"
      "\"per_subscriber\":{\"frames_per_s\":%.1f,\"bytes_per_s\":%.0f,\"wire_bytes_per_s\":%.0f},\"wire_bytes\":"
      "%" PRIu64 ",\"infos\":%" PRIu64 ",\"gaps\":%" PRIu64 ",\"conflated\":%" PRIu64 ",\"out_of_order\":%" PRIu64
      ",\"forwarded\":%" PRIu64
      ",\"first_subscriber\":{\"busiest_channel_frames_per_s\":%.2f,\"infos_per_s\":%.2f}"
      ",\"latency_samples\":%" PRIu64
      ",\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"p999_ms\":%.3f,\"max_ms\":%.3f,\"latency_us\":%s}\n",
      o.connections, r.connected, r.compressed, r.failed, r.closed_early, r.seconds, r.frames,
      static_cast<double>(r.frames_measured) / s, static_cast<double>(r.bytes_measured) / s,
      static_cast<double>(r.wire_bytes_measured) / s, static_cast<double>(r.frames_measured) / s / n,
      static_cast<double>(r.bytes_measured) / s / n, static_cast<double>(r.wire_bytes_measured) / s / n, r.wire_bytes,
      r.infos, r.gaps, r.conflated, r.out_of_order, r.forwarded, static_cast<double>(r.busiest_channel_frames) / s,
      static_cast<double>(r.first_infos) / s, r.latency.count(), ms(r.latency.quantile(0.5)),
      ms(r.latency.quantile(0.99)), ms(r.latency.quantile(0.999)), ms(r.latency.max()), us.c_str());
}

void print_text(const LoadOptions& o, const LoadResult& r) {
  const double s = r.seconds > 0 ? r.seconds : 1, n = r.connected ? r.connected : 1;
  auto ms = [](uint64_t us) { return static_cast<double>(us) / 1000.0; };
  std::printf("connections %u/%u (failed %u, closed early %u, compressed %u) over %.1f s measured\n", r.connected,
              o.connections, r.failed, r.closed_early, r.compressed, r.seconds);
  std::printf("frames/s %.0f  bytes/s %.0f  INFO %" PRIu64 "  gaps %" PRIu64 "  conflated %" PRIu64
              "  out of order %" PRIu64 "\n",
              static_cast<double>(r.frames_measured) / s, static_cast<double>(r.bytes_measured) / s, r.infos, r.gaps,
              r.conflated, r.out_of_order);
  std::printf("per subscriber: frames/s %.1f  frame bytes/s %.0f  wire bytes/s %.0f\n",
              static_cast<double>(r.frames_measured) / s / n, static_cast<double>(r.bytes_measured) / s / n,
              static_cast<double>(r.wire_bytes_measured) / s / n);
  std::printf("latency ms: p50 %.3f  p99 %.3f  p99.9 %.3f  max %.3f  (%" PRIu64 " samples)\n",
              ms(r.latency.quantile(0.5)), ms(r.latency.quantile(0.99)), ms(r.latency.quantile(0.999)),
              ms(r.latency.max()), r.latency.count());
  stage_line("total", r.latency);
  if (r.record_engine.count()) {
    stage_line("record->engine", r.record_engine);
    stage_line("engine->relay", r.engine_relay);
    stage_line("relay->subscriber", r.relay_subscriber);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Args x = parse_args(argc, argv);
  signal(SIGPIPE, SIG_IGN);  // a server that closes first costs an EPIPE, not the run
  LoadResult r = run_load(x.o);
  if (x.json)
    print_json(x.o, r);
  else
    print_text(x.o, r);
  if (!r.error.empty()) std::fprintf(stderr, "oddsload: %s\n", r.error.c_str());
  return r.connected == 0 ? 1 : 0;
}
