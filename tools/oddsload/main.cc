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
  --connect HOST:PORT   server (default 127.0.0.1:8080)
  --path PATH           stream path (default /pt-ws?protocol=v2; or /ws)
  --key KEY             API key (appended as api_key=)
  --connections N       subscribers (default 100)
  --duration SECONDS    total run time, then every client closes (default 10)
  --warmup SECONDS      latency is counted after this (default 1, and never
                        before every connection has had time to open)
  --connect-rate N      new connections per second (default 2000)
  --progress SECONDS    progress line on stderr (default 1; 0 = off)
  --json                print the summary as one JSON object
Baseline mode (perf/relay/run.sh, nchan):
  --forward HOST:PORT/PATH   one extra /pt-ws subscriber POSTs every frame it
                        gets to this HTTP publisher, stamping INFO `at` with
                        the time it publishes
  --subscribe HOST:PORT/PATH subscribers connect here instead (no key)
  --version             the version and the commit it was built from
  --help                this text

Latency is now - `at` of the INFO frame that closes a turn of batches (/ws:
`ts` of live_update and market messages); `at` comes from the feed in
milliseconds, so figures carry up to 1 ms of quantisation. Where the INFO
carries the server's microsecond stamps (applied_us, encoded_us), the
latency is also reported per stage in microseconds: record->engine (`at` to
the engine having applied the group; carries the `at` quantisation),
engine->relay (to the relay having encoded it) and relay->subscriber (to
this client parsing the INFO). --json adds them as
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

// The command line into `o`; -1 to go on, else the exit code (--help: 0).
int parse_args(int argc, char** argv, LoadOptions& o, bool& json) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto need = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "oddsload: %s needs a value (see --help)\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    auto number = [&](double lo, double hi) {
      const char* v = need();
      char* end = nullptr;
      double d = std::strtod(v, &end);
      if (*v == '\0' || *end != '\0' || d < lo || d > hi) {
        std::fprintf(stderr, "oddsload: bad %s '%s' (%g..%g)\n", a.c_str(), v, lo, hi);
        std::exit(2);
      }
      return d;
    };
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--version") {
      std::printf("oddsload %s (commit %s)\n", ODDSRELAY_VERSION, ODDSRELAY_COMMIT);
      return 0;
    } else if (a == "--connect") {
      if (!split_hostport(need(), o.host, o.port, nullptr)) {
        std::fprintf(stderr, "oddsload: bad --connect (HOST:PORT)\n");
        return 2;
      }
    } else if (a == "--path")
      o.path = need();
    else if (a == "--key")
      o.api_key = need();
    else if (a == "--connections")
      o.connections = static_cast<uint32_t>(number(1, 100000));
    else if (a == "--duration")
      o.duration_s = number(0.1, 86400);
    else if (a == "--warmup")
      o.warmup_s = number(0, 3600);
    else if (a == "--connect-rate")
      o.connect_rate = static_cast<uint32_t>(number(1, 1e6));
    else if (a == "--progress")
      o.progress_s = number(0, 3600);
    else if (a == "--json")
      json = true;
    else if (a == "--forward") {
      o.forward = true;
      if (!split_hostport(need(), o.forward_host, o.forward_port, &o.forward_path)) {
        std::fprintf(stderr, "oddsload: bad --forward (HOST:PORT/PATH)\n");
        return 2;
      }
    } else if (a == "--subscribe") {
      std::string host;
      if (!split_hostport(need(), host, o.subscribe_port, &o.subscribe_path)) {
        std::fprintf(stderr, "oddsload: bad --subscribe (HOST:PORT/PATH)\n");
        return 2;
      }
    } else {
      std::fprintf(stderr, "oddsload: unknown option '%s' (see --help)\n", a.c_str());
      return 2;
    }
  }
  return -1;
}

double ms(uint64_t us) { return static_cast<double>(us) / 1000.0; }

// One JSON object on stdout (what scripts and perf/ read).
void print_json(const LoadOptions& o, const LoadResult& r) {
  const double s = r.seconds > 0 ? r.seconds : 1;
  // Microseconds, the whole span and per stage (stages only where the
  // server stamps its INFOs).
  std::string us = "{\"total\":" + stage_json(r.latency);
  if (r.record_engine.count()) {
    us += ",\"record_engine\":" + stage_json(r.record_engine) + ",\"engine_relay\":" + stage_json(r.engine_relay) +
          ",\"relay_subscriber\":" + stage_json(r.relay_subscriber);
  }
  us += "}";
  std::printf(
      "{\"connections\":%u,\"connected\":%u,\"failed\":%u,\"closed_early\":%u,\"seconds\":%.2f,"
      "\"frames\":%" PRIu64 ",\"frames_per_s\":%.0f,\"bytes_per_s\":%.0f,\"infos\":%" PRIu64 ",\"gaps\":%" PRIu64
      ",\"conflated\":%" PRIu64 ",\"out_of_order\":%" PRIu64 ",\"forwarded\":%" PRIu64 ",\"latency_samples\":%" PRIu64
      ",\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"p999_ms\":%.3f,\"max_ms\":%.3f,\"latency_us\":%s}\n",
      o.connections, r.connected, r.failed, r.closed_early, r.seconds, r.frames,
      static_cast<double>(r.frames_measured) / s, static_cast<double>(r.bytes_measured) / s, r.infos, r.gaps,
      r.conflated, r.out_of_order, r.forwarded, r.latency.count(), ms(r.latency.quantile(0.5)),
      ms(r.latency.quantile(0.99)), ms(r.latency.quantile(0.999)), ms(r.latency.max()), us.c_str());
}

// The same figures for a person.
void print_text(const LoadOptions& o, const LoadResult& r) {
  const double s = r.seconds > 0 ? r.seconds : 1;
  std::printf("connections %u/%u (failed %u, closed early %u) over %.1f s measured\n", r.connected, o.connections,
              r.failed, r.closed_early, r.seconds);
  std::printf("frames/s %.0f  bytes/s %.0f  INFO %" PRIu64 "  gaps %" PRIu64 "  conflated %" PRIu64
              "  out of order %" PRIu64 "\n",
              static_cast<double>(r.frames_measured) / s, static_cast<double>(r.bytes_measured) / s, r.infos, r.gaps,
              r.conflated, r.out_of_order);
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
  LoadOptions o;
  bool json = false;
  if (int rc = parse_args(argc, argv, o, json); rc >= 0) return rc;
  signal(SIGPIPE, SIG_IGN);  // a server that closes first costs an EPIPE, not the run
  LoadResult r = run_load(o);
  if (json)
    print_json(o, r);
  else
    print_text(o, r);
  if (!r.error.empty()) std::fprintf(stderr, "oddsload: %s\n", r.error.c_str());
  return r.connected == 0 ? 1 : 0;
}
