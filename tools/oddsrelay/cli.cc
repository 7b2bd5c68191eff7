#include "tools/oddsrelay/cli.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <string_view>
#include <thread>

#include "protocol/bus_contract.h"

namespace oddsrelay {

const char* const kUsage = R"(Usage: oddsrelay [options]

A low-latency sports-odds relay: applies an upstream feed to an immutable
snapshot store and serves it (REST, /ws, /pt-ws; see docs/api.md).

Options:
  --listen HOST:PORT     address to serve on (default 127.0.0.1:8080)
  --metrics-listen HOST:PORT
                         serve GET /metrics (Prometheus text format) on this
                         address of its own, without an API key; keep it
                         where only the monitoring reaches it. Default: on
                         the main address, with any valid key (X-API-Key or
                         ?api_key=), like /v1/status; see docs/metrics.md
  --feed SPEC            where records come from (default sim):
                           sim[:seed=N,events=N,rate=N,minute=MS,tick=MS,correct=N]
                             built-in simulator; rate = odds records/s
                             (default seed=1 events=300 rate=200 minute=4000);
                             tick = ms between scoreboard ticks (default
                             min(1000, minute)); correct = per mille of
                             finals corrected later (default 0)
                           replay:FILE[,speed=X]
                             a feed file (plain or .gz), paced by its `at`
                             stamps; X = factor of real time or `max`
                           none
                             no source: serve what --data-dir holds
                           nats://HOST:PORT[,HOST:PORT...]/STREAM
                             an edge: join the log an ingest node publishes
                             there (newest snapshot, then the stream after
                             it) and follow it live; not with --data-dir.
                             A list names the servers of one cluster: the
                             first reachable is used, any other on failure
  --bus-stale-after MS   an edge's upstream_ready turns false when nothing
                         came from the bus for MS while the stream moved on
                         (or the bus does not answer); the edge then also
                         recreates its consumer (default 1000)
  --capture FILE         append every applied record to FILE (feed format;
                         gzip when FILE ends in .gz)
  --data-dir DIR         durable state (the log): on start the newest snapshot
                         is loaded and the journal after it replayed; every
                         applied record is appended (written before any client
                         sees it, fsync every 200 ms); the dir's epoch names
                         the log and seq continues across restarts
  --snapshot-every N     compaction: write a snapshot and drop the journal it
                         covers after N records (default 50000)...
  --snapshot-journal PCT ...or once the journal since the last snapshot is PCT%
                         of that snapshot's size (at least 1 MiB; default 15,
                         0: off): keeps the data dir within a tenth of its mean
  --snapshot-interval S  ...or after S seconds with any record (default 300)
  --publish nats://HOST:PORT[,HOST:PORT...]/STREAM
                         ingest node: publish every applied record, in log
                         order, to the JetStream stream STREAM (created if
                         missing), and snapshots beside it on STREAM_SNAP;
                         a list names the servers of one cluster
  --publish-replicas N   copies of both streams the cluster keeps when it
                         creates them (1..5; default 1, for one server; 3
                         for a three-server cluster); an existing stream
                         with other settings is reported, not changed
  --publish-max-age S    the log stream keeps messages S seconds (default
                         86400; applies when the stream is created)
  --publish-max-bytes N  ...and at most N bytes, K/M/G allowed (default 1G)
  --publish-buffer N     bytes of records kept while the bus is away
                         (default 256M); past it the records are dropped and
                         their state is published as a snapshot on return
  --publish-snapshot-every N     a snapshot on the bus every N records
                         (default 50000)...
  --publish-snapshot-interval S  ...or every S seconds with any record
                         (default 60)
  --retain-ended DURATION
                         retention horizon in feed time: an event that ended
                         or was removed leaves the state (REST answers it as
                         unknown) once the feed's newest `at` is this far
                         past its last record; N followed by d, h, m or s
                         (default 96h, above the 72 h window for corrected
                         results; shorter only for tests and soaks)
  --resume-window SPEC   what /pt-ws and /ws keep for `resume=EPOCH:SEQ`:
                         BYTES[K|M|G] and/or SECONDS followed by s, comma-
                         separated (default 128M,60s)
  --keys FILE            API keys (docs/api.md)
  --catalog FILE         market catalog (default: data/catalog.json as built
                         into the binary; tools/catalog/gen_catalog.py);
                         read again on SIGHUP and every --catalog-reload:
                         a changed file replaces the catalog (new ETag), a
                         bad one is logged and the old catalog kept
  --catalog-reload DURATION
                         how often --catalog FILE is read again: N followed
                         by d, h, m or s, or 0 = only on SIGHUP (default 1h)
  --progress SECONDS     interval of the progress line on stderr (default 5;
                         0 = off)
  --exit-after-replay    exit once a replay is applied (benchmarks, tests)
  --header-timeout MS    close a connection whose request is not complete
                         this long after its first byte (default 10000)
  --idle-timeout MS      close keep-alive connections idle this long
                         (default 60000)
  --http-threads N       REST loops, each on its own thread (1..64; default
                         half the cores, at least 1, at most 4); one
                         listening socket, connections dealt in turn
  --rate-window SECONDS  rate-limit window (default 60, as docs/api.md says;
                         shorter only to test resets)
  --ws-update MS         /ws live_update at most this often (default 1000)
  --ws-ping MS           /ws and /pt-ws heartbeat: ping interval; a client
                         without a pong for two intervals is closed
                         (default 30000)
  --ws-compression off|shared
                         permessage-deflate on /ws and /pt-ws: shared (the
                         default) answers a client's offer and compresses
                         each frame once for all the streams that
                         negotiated it; off never negotiates it
  --max-queue-bytes N    per-stream send queue bound; a subscriber past it
                         is closed with 1008 (default 8388608)
  --slow-timeout SECONDS close (1008) a stream whose writes have not
                         progressed for this long, or that has held more
                         than a quarter of --max-queue-bytes for this long
                         (default 30; 0 = off)
  --relay-threads N      relay loops the streams are spread over (each a
                         thread; every batch is encoded once for all of
                         them); default 0: half the cores, at least 1, at
                         most 16
  --handshake-rate N     stream handshakes (/ws, /pt-ws) per minute per
                         connection slot of a key, apart from the REST rate
                         limit; past it 429 (default 12: a burst of 60 for
                         5 slots; 0 = unbounded; sandbox keys: unbounded)
  --stream-sports LIST   sport ids whose live events have a stream add-on
                         (default 1,2,5; empty = none)
  --stream-ttl SECONDS   lifetime of signed stream URLs (default 3600)
  --webhook-retries N    attempts per event_ended / settlement_changed
                         callback before it counts as dropped (default 8)
  --webhook-timeout MS   one webhook POST, connect to answer (default 3000)
  --access-log FILE|-    one JSON line per REST request and per stream open
                         and close (client, key name, path, status, bytes,
                         time; never a key) to FILE, or - for standard
                         output; reopened on SIGHUP (default: off)
  --webhook-ca FILE      PEM certificates trusted for https:// webhook
                         endpoints besides the system's CA store (a private
                         CA); certificates and host names are always checked
  --trust-proxy CIDR[,CIDR]
                         reverse proxies in front of the server: only from a
                         peer in these networks are X-Forwarded-For (the
                         right-most address not itself trusted is the
                         client) and a PROXY protocol v1 line believed, for
                         allow_ips; from any other peer both are ignored
                         and a PROXY line is a bad request (default: none;
                         docs/deploy.md)
  --public-url URL       where clients reach the server, e.g.
                         https://odds.example.com: the base of the URLs it
                         hands out (stream add-on) and an own origin of the
                         explorer's demo key (default: http:// and the
                         request's Host)
  --version              the version and the commit it was built from
  --help                 this text
)";

namespace {

// Integer options: name, bounds, and the field they set.
struct IntOption {
  const char* name;
  uint64_t min, max;
  int64_t Options::*field;
  bool bytes = false;  // K, M or G suffix allowed
};
constexpr IntOption kIntOptions[] = {
    {"--header-timeout", 1, 3'600'000, &Options::header_timeout_ms},
    {"--idle-timeout", 1, 3'600'000, &Options::idle_timeout_ms},
    {"--http-threads", 1, 64, &Options::http_threads},
    {"--rate-window", 1, 3600, &Options::rate_window_s},
    {"--ws-update", 10, 3'600'000, &Options::ws_update_ms},
    {"--ws-ping", 100, 3'600'000, &Options::ws_ping_ms},
    {"--max-queue-bytes", 64 * 1024, uint64_t{1} << 32, &Options::max_queue_bytes},
    {"--slow-timeout", 0, 3600, &Options::slow_timeout_s},
    {"--relay-threads", 0, 256, &Options::relay_threads},
    {"--handshake-rate", 0, 100'000, &Options::handshake_rate},
    {"--stream-ttl", 1, 30 * 86400, &Options::stream_ttl_s},
    {"--webhook-retries", 1, 1000, &Options::webhook_retries},
    {"--webhook-timeout", 10, 600'000, &Options::webhook_timeout_ms},
    {"--snapshot-every", 100, uint64_t{1} << 40, &Options::snapshot_every},
    {"--snapshot-journal", 0, 1000, &Options::snapshot_journal_pct},
    {"--snapshot-interval", 1, 30 * 86400, &Options::snapshot_interval_s},
    {"--publish-max-age", 1, 365 * 86400, &Options::publish_max_age_s},
    {"--publish-max-bytes", 1 << 20, uint64_t{1} << 40, &Options::publish_max_bytes, true},
    {"--publish-buffer", 1 << 20, uint64_t{1} << 36, &Options::publish_buffer, true},
    {"--publish-snapshot-every", 100, uint64_t{1} << 40, &Options::publish_snapshot_every},
    {"--publish-snapshot-interval", 1, 30 * 86400, &Options::publish_snapshot_interval_s},
    {"--publish-replicas", 1, 5, &Options::publish_replicas},
    {"--bus-stale-after", 100, 3'600'000, &Options::bus_stale_after_ms},
};
const IntOption* int_option(std::string_view name) {
  for (const auto& o : kIntOptions)
    if (name == o.name) return &o;
  return nullptr;
}

bool parse_u64(std::string_view s, uint64_t& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

bool parse_double(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

}  // namespace

bool parse_feed_spec(const std::string& spec, FeedSpec& out, std::string& err) {
  if (spec == "sim" || spec.rfind("sim:", 0) == 0) {
    out.kind = FeedSpec::Kind::Sim;
    std::string_view rest = spec.size() > 4 ? std::string_view(spec).substr(4) : std::string_view();
    while (!rest.empty()) {
      size_t comma = rest.find(',');
      std::string_view kv = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      size_t eq = kv.find('=');
      std::string_view k = kv.substr(0, eq), v = eq == std::string_view::npos ? std::string_view() : kv.substr(eq + 1);
      uint64_t n = 0;
      if (k == "seed" && parse_u64(v, n))
        out.sim.seed = n;
      else if (k == "events" && parse_u64(v, n) && n >= 1 && n <= 1'000'000)
        out.sim.events = static_cast<uint32_t>(n);
      else if (k == "rate" && parse_u64(v, n) && n >= 1 && n <= 10'000'000)
        out.sim.rate = static_cast<double>(n);
      else if (k == "minute" && parse_u64(v, n) && n >= 10 && n <= 600'000)
        out.sim.minute_ms = static_cast<int64_t>(n);
      else if (k == "tick" && parse_u64(v, n) && n >= 10 && n <= 3'600'000)
        out.sim.tick_ms = static_cast<int64_t>(n);
      else if (k == "correct" && parse_u64(v, n) && n <= 1000)
        out.sim.correct_permille = static_cast<uint32_t>(n);
      else {
        err = "bad --feed sim option '" + std::string(kv) +
              "' (seed=N, events=1..1000000, rate=1..10000000, minute=10..600000, tick=10..3600000, correct=0..1000)";
        return false;
      }
    }
    return true;
  }
  if (spec.rfind("replay:", 0) == 0) {
    out.kind = FeedSpec::Kind::Replay;
    std::string rest = spec.substr(7);
    size_t sp = rest.rfind(",speed=");
    if (sp != std::string::npos) {
      std::string v = rest.substr(sp + 7);
      rest.resize(sp);
      if (v == "max")
        out.speed = 0;
      else if (!parse_double(v, out.speed) || !(out.speed > 0) || out.speed > 1e6) {
        err = "bad replay speed '" + v + "' (a positive factor of real time, or max)";
        return false;
      }
    }
    if (rest.empty()) {
      err = "--feed replay: needs a file";
      return false;
    }
    out.path = rest;
    return true;
  }
  if (spec == "none") {
    out.kind = FeedSpec::Kind::None;
    return true;
  }
  if (spec.rfind("nats://", 0) == 0) {
    bus::BusUrl url;
    if (!bus::parse_bus_url(spec, url, err)) {
      err = "bad --feed " + spec + ": " + err;
      return false;
    }
    out.kind = FeedSpec::Kind::Bus;
    out.path = spec;
    return true;
  }
  err = "unknown --feed '" + spec +
        "' (sim[:...], replay:FILE[,speed=X], none or nats://HOST:PORT[,HOST:PORT...]/STREAM)";
  return false;
}

bool parse_duration(std::string_view spec, int64_t& ms) {
  if (spec.size() < 2) return false;
  int64_t unit = 0;
  switch (spec.back()) {
    case 'd':
      unit = 86'400'000;
      break;
    case 'h':
      unit = 3'600'000;
      break;
    case 'm':
      unit = 60'000;
      break;
    case 's':
      unit = 1000;
      break;
    default:
      return false;
  }
  uint64_t n = 0;
  if (!parse_u64(spec.substr(0, spec.size() - 1), n) || n == 0 ||
      n > 3650ull * 86'400'000 / static_cast<uint64_t>(unit))
    return false;
  ms = static_cast<int64_t>(n) * unit;
  return true;
}

bool parse_resume_window(const std::string& spec, Options& out, std::string& err) {
  std::string_view rest = spec;
  bool any = false;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view part = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    uint64_t n = 0, mult = 1;
    bool seconds = false;
    if (!part.empty()) {
      switch (part.back()) {
        case 's':
          seconds = true;
          part.remove_suffix(1);
          break;
        case 'K':
          mult = 1u << 10;
          part.remove_suffix(1);
          break;
        case 'M':
          mult = 1u << 20;
          part.remove_suffix(1);
          break;
        case 'G':
          mult = 1u << 30;
          part.remove_suffix(1);
          break;
        default:
          break;
      }
    }
    if (!parse_u64(part, n) || (seconds && (n < 1 || n > 86400)) ||
        (!seconds && (n * mult < 1 << 16 || n > (uint64_t{1} << 40) / mult))) {
      err = "bad --resume-window '" + spec + "' (e.g. 128M,60s: bytes 64K..1T with K/M/G, seconds 1..86400 with s)";
      return false;
    }
    if (seconds)
      out.resume_window_s = static_cast<int64_t>(n);
    else
      out.resume_window_bytes = n * mult;
    any = true;
  }
  if (!any) {
    err = "--resume-window needs a value (e.g. 128M,60s)";
    return false;
  }
  return true;
}

bool parse_cli(int argc, const char* const* argv, Options& out, std::string& err) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    std::string val;
    bool has_inline = false;
    if (size_t eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
      val = a.substr(eq + 1);
      a.resize(eq);
      has_inline = true;
    }
    auto need = [&](std::string& dst) {
      if (has_inline) {
        dst = val;
        return true;
      }
      if (i + 1 >= argc) {
        err = a + " needs a value";
        return false;
      }
      dst = argv[++i];
      return true;
    };
    if (has_inline && (a == "--help" || a == "--version" || a == "--exit-after-replay")) {
      err = a + " takes no value";
      return false;
    }
    if (a == "--help" || a == "-h") {
      out.help = true;
    } else if (a == "--version") {
      out.version = true;
    } else if (a == "--listen" || a == "--metrics-listen") {
      std::string v;
      if (!need(v)) return false;
      size_t colon = v.rfind(':');
      uint64_t port = 0;
      if (colon == std::string::npos || colon == 0 || !parse_u64(std::string_view(v).substr(colon + 1), port) ||
          port == 0 || port > 65535) {
        err = "bad " + a + " '" + v + "' (HOST:PORT, port 1..65535)";
        return false;
      }
      (a == "--listen" ? out.host : out.metrics_host) = v.substr(0, colon);
      (a == "--listen" ? out.port : out.metrics_port) = static_cast<uint16_t>(port);
    } else if (a == "--feed") {
      std::string v;
      if (!need(v) || !parse_feed_spec(v, out.feed, err)) return false;
    } else if (a == "--capture") {
      if (!need(out.capture)) return false;
    } else if (a == "--data-dir") {
      if (!need(out.data_dir)) return false;
    } else if (a == "--publish") {
      if (!need(out.publish)) return false;
      bus::BusUrl url;
      if (!bus::parse_bus_url(out.publish, url, err)) {
        err = "bad --publish " + out.publish + ": " + err;
        return false;
      }
    } else if (a == "--retain-ended") {
      std::string v;
      if (!need(v)) return false;
      if (!parse_duration(v, out.retain_ended_ms)) {
        err = "bad --retain-ended '" + v + "' (a duration such as 96h, 90m or 30s; 1s..3650d)";
        return false;
      }
    } else if (a == "--resume-window") {
      std::string v;
      if (!need(v) || !parse_resume_window(v, out, err)) return false;
    } else if (a == "--keys") {
      if (!need(out.keys)) return false;
    } else if (a == "--ws-compression") {
      std::string v;
      if (!need(v)) return false;
      if (v != "off" && v != "shared") {
        err = "bad --ws-compression '" + v + "' (off or shared)";
        return false;
      }
      out.ws_compression = v == "shared";
    } else if (a == "--stream-sports") {
      std::string v;
      if (!need(v)) return false;
      out.stream_sports.clear();
      std::string_view rest = v;
      while (!rest.empty()) {
        size_t c = rest.find(',');
        uint64_t n = 0;
        if (!parse_u64(rest.substr(0, c), n) || n == 0 || n > 100000) {
          err = "bad --stream-sports '" + v + "' (sport ids separated by commas)";
          return false;
        }
        out.stream_sports.push_back(static_cast<int32_t>(n));
        if (c == std::string_view::npos) break;
        rest.remove_prefix(c + 1);
      }
    } else if (a == "--catalog") {
      if (!need(out.catalog)) return false;
    } else if (a == "--trust-proxy") {
      std::string v;
      if (!need(v)) return false;
      if (!rest::TrustedProxies::parse(v, out.trust_proxy, err)) {
        err = "bad --trust-proxy: " + err + " (CIDR[,CIDR], e.g. 127.0.0.1/32,10.0.0.0/8)";
        return false;
      }
    } else if (a == "--public-url") {
      std::string v;
      if (!need(v)) return false;
      if (!rest::parse_public_url(v, out.public_url, err)) {
        err = "bad --public-url: " + err;
        return false;
      }
    } else if (a == "--webhook-ca") {
      if (!need(out.webhook_ca)) return false;
    } else if (a == "--access-log") {
      if (!need(out.access_log)) return false;
    } else if (a == "--catalog-reload") {
      std::string v;
      if (!need(v)) return false;
      if (v == "0") {
        out.catalog_reload_ms = 0;
      } else if (!parse_duration(v, out.catalog_reload_ms)) {
        err = "bad --catalog-reload '" + v + "' (a duration such as 1h, 10m or 30s, or 0 = only on SIGHUP)";
        return false;
      }
    } else if (a == "--progress") {
      std::string v;
      if (!need(v)) return false;
      if (!parse_double(v, out.progress_s) || out.progress_s < 0) {
        err = "bad --progress '" + v + "' (seconds, 0 = off)";
        return false;
      }
    } else if (const IntOption* o = int_option(a)) {
      std::string v;
      if (!need(v)) return false;
      uint64_t n = 0, mult = 1;
      std::string_view num = v;
      if (o->bytes && !num.empty()) {
        switch (num.back()) {
          case 'K':
            mult = 1u << 10;
            num.remove_suffix(1);
            break;
          case 'M':
            mult = 1u << 20;
            num.remove_suffix(1);
            break;
          case 'G':
            mult = 1u << 30;
            num.remove_suffix(1);
            break;
          default:
            break;
        }
      }
      if (!parse_u64(num, n) || n > o->max / mult || n * mult < o->min || n * mult > o->max) {
        err = "bad " + a + " '" + v + "' (" + std::to_string(o->min) + ".." + std::to_string(o->max) + ")";
        return false;
      }
      out.*(o->field) = static_cast<int64_t>(n * mult);
    } else if (a == "--exit-after-replay") {
      out.exit_after_replay = true;
    } else {
      err = "unknown option '" + a + "'";
      return false;
    }
  }
  if (out.metrics_port != 0 && out.metrics_port == out.port && out.metrics_host == out.host) {
    err = "--metrics-listen must differ from --listen (without it, /metrics is on the main address)";
    return false;
  }
  if (out.http_threads == 0) out.http_threads = default_http_threads(std::thread::hardware_concurrency());
  if (out.feed.kind == FeedSpec::Kind::Bus && !out.data_dir.empty()) {
    err = "--feed nats:// takes its log from the bus: no --data-dir";
    return false;
  }
  if (out.feed.kind == FeedSpec::Kind::Bus && !out.publish.empty()) {
    err = "--publish is for an ingest node; an edge (--feed nats://) follows the log, it does not publish it";
    return false;
  }
  return true;
}

int64_t default_http_threads(unsigned cores) { return std::clamp<int64_t>(cores / 2, 1, 4); }

}  // namespace oddsrelay
