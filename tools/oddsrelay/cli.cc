#include "tools/oddsrelay/cli.h"

#include <algorithm>
#include <thread>

#include "protocol/bus_contract.h"

namespace oddsrelay {

namespace {

// How a flag's value lands in Options: exactly one of these is set.
struct Take {
  bool Options::*toggle = nullptr;       // a switch, which takes no value
  std::string Options::*text = nullptr;  // a value kept as given (a file, a directory)
  int64_t Options::*number = nullptr;    // a whole number within [min, max]
  uint64_t min = 0, max = 0;
  bool bytes = false;  // the number may end in K, M or G
  // a value with a grammar or a check of its own; false with `err` set
  bool (*parse)(const std::string& value, Options& out, std::string& err) = nullptr;
};

constexpr Take toggle(bool Options::*field) {
  Take t;
  t.toggle = field;
  return t;
}
constexpr Take text(std::string Options::*field) {
  Take t;
  t.text = field;
  return t;
}
constexpr Take number(uint64_t min, uint64_t max, int64_t Options::*field, bool bytes = false) {
  Take t;
  t.number = field;
  t.min = min;
  t.max = max;
  t.bytes = bytes;
  return t;
}
constexpr Take custom(bool (*parse)(const std::string&, Options&, std::string&)) {
  Take t;
  t.parse = parse;
  return t;
}

bool parse_host_port(const char* flag, const std::string& v, std::string& host, uint16_t& port, std::string& err) {
  size_t colon = v.rfind(':');
  uint64_t n = 0;
  if (colon == std::string::npos || colon == 0 || !parse_u64(std::string_view(v).substr(colon + 1), n) || n == 0 ||
      n > 65535) {
    err = std::string("bad ") + flag + " '" + v + "' (HOST:PORT, port 1..65535)";
    return false;
  }
  host = v.substr(0, colon);
  port = static_cast<uint16_t>(n);
  return true;
}
bool take_listen(const std::string& v, Options& out, std::string& err) {
  return parse_host_port("--listen", v, out.host, out.port, err);
}
bool take_metrics_listen(const std::string& v, Options& out, std::string& err) {
  return parse_host_port("--metrics-listen", v, out.metrics_host, out.metrics_port, err);
}
bool take_feed(const std::string& v, Options& out, std::string& err) { return parse_feed_spec(v, out.feed, err); }
bool take_publish(const std::string& v, Options& out, std::string& err) {
  out.publish = v;
  bus::BusUrl url;
  if (bus::parse_bus_url(v, url, err)) return true;
  err = "bad --publish " + v + ": " + err;
  return false;
}
bool take_retain_ended(const std::string& v, Options& out, std::string& err) {
  if (parse_duration(v, out.retain_ended_ms)) return true;
  err = "bad --retain-ended '" + v + "' (a duration such as 96h, 90m or 30s; 1s..3650d)";
  return false;
}
bool take_history(const std::string& v, Options& out, std::string& err) {
  if (v != "off" && v != "on") {
    err = "bad --history '" + v + "' (on or off)";
    return false;
  }
  out.history = v == "on";
  return true;
}
bool take_resume_window(const std::string& v, Options& out, std::string& err) {
  return parse_resume_window(v, out, err);
}
bool take_relay_io(const std::string& v, Options& out, std::string& err) {
  if (v != "uring" && v != "writev") {
    err = "bad --relay-io '" + v + "' (uring or writev)";
    return false;
  }
  out.relay_uring = v == "uring";
  return true;
}
bool take_ws_compression(const std::string& v, Options& out, std::string& err) {
  if (v != "off" && v != "shared") {
    err = "bad --ws-compression '" + v + "' (off or shared)";
    return false;
  }
  out.ws_compression = v == "shared";
  return true;
}
bool take_stream_sports(const std::string& v, Options& out, std::string& err) {
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
  return true;
}
bool take_trust_proxy(const std::string& v, Options& out, std::string& err) {
  if (rest::TrustedProxies::parse(v, out.trust_proxy, err)) return true;
  err = "bad --trust-proxy: " + err + " (CIDR[,CIDR], e.g. 127.0.0.1/32,10.0.0.0/8)";
  return false;
}
bool take_public_url(const std::string& v, Options& out, std::string& err) {
  if (api::parse_public_url(v, out.public_url, err)) return true;
  err = "bad --public-url: " + err;
  return false;
}
bool take_catalog_reload(const std::string& v, Options& out, std::string& err) {
  if (v == "0") {
    out.catalog_reload_ms = 0;
    return true;
  }
  if (parse_duration(v, out.catalog_reload_ms)) return true;
  err = "bad --catalog-reload '" + v + "' (a duration such as 1h, 10m or 30s, or 0 = only on SIGHUP)";
  return false;
}
bool take_progress(const std::string& v, Options& out, std::string& err) {
  if (parse_double(v, out.progress_s) && out.progress_s >= 0) return true;
  err = "bad --progress '" + v + "' (seconds, 0 = off)";
  return false;
}

// One flag: its name, its value's name and its text in --help, and how it is
// taken. --help is written from this table and the parser reads it, so the
// two cannot drift apart. In the order --help lists them.
struct Flag {
  const char* name;
  const char* value;  // empty for a switch
  const char* help;   // lines after the first are indented under it
  Take take;
};
const Flag kFlags[] = {
    {"--listen", "HOST:PORT", "address to serve on (default 127.0.0.1:8080)", custom(take_listen)},
    {"--metrics-listen", "HOST:PORT",
     "serve GET /metrics (Prometheus text format) on this\n"
     "address of its own, without an API key; keep it\n"
     "where only the monitoring reaches it. Default: on\n"
     "the main address, with any valid key (X-API-Key or\n"
     "?api_key=), like /v1/status; see docs/metrics.md",
     custom(take_metrics_listen)},
    {"--feed", "SPEC",
     "where records come from (default sim):\n"
     "  sim[:seed=N,events=N,rate=N,minute=MS,tick=MS,correct=N]\n"
     "    built-in simulator; rate = odds records/s\n"
     "    (default seed=1 events=300 rate=200 minute=4000);\n"
     "    tick = ms between scoreboard ticks (default\n"
     "    min(1000, minute)); correct = per mille of\n"
     "    finals corrected later (default 0)\n"
     "  replay:FILE[,speed=X]\n"
     "    a feed file (plain or .gz), paced by its `at`\n"
     "    stamps; X = factor of real time or `max`\n"
     "  none\n"
     "    no source: serve what --data-dir holds\n"
     "  nats://HOST:PORT[,HOST:PORT...]/STREAM\n"
     "    an edge: join the log an ingest node publishes\n"
     "    there (newest snapshot, then the stream after\n"
     "    it) and follow it live; not with --data-dir.\n"
     "    A list names the servers of one cluster: the\n"
     "    first reachable is used, any other on failure",
     custom(take_feed)},
    {"--bus-stale-after", "MS",
     "an edge's upstream_ready turns false when nothing\n"
     "came from the bus for MS while the stream moved on\n"
     "(or the bus does not answer); the edge then also\n"
     "recreates its consumer (default 1000)",
     number(100, 3'600'000, &Options::bus_stale_after_ms)},
    {"--capture", "FILE",
     "append every applied record to FILE (feed format;\n"
     "gzip when FILE ends in .gz)",
     text(&Options::capture)},
    {"--data-dir", "DIR",
     "durable state (the log): on start the newest snapshot\n"
     "is loaded and the journal after it replayed; every\n"
     "applied record is appended (written before any client\n"
     "sees it, fsync every 200 ms); the dir's epoch names\n"
     "the log and seq continues across restarts",
     text(&Options::data_dir)},
    {"--snapshot-every", "N",
     "compaction: write a snapshot and drop the journal it\n"
     "covers after N records (default 50000)...",
     number(100, uint64_t{1} << 40, &Options::snapshot_every)},
    {"--snapshot-journal", "PCT",
     "...or once the journal since the last snapshot is PCT%\n"
     "of that snapshot's size (at least 1 MiB; default 15,\n"
     "0: off): keeps the data dir within a tenth of its mean",
     number(0, 1000, &Options::snapshot_journal_pct)},
    {"--snapshot-interval", "S", "...or after S seconds with any record (default 300)",
     number(1, 30 * 86400, &Options::snapshot_interval_s)},
    {"--publish", "nats://HOST:PORT[,HOST:PORT...]/STREAM",
     "ingest node: publish every applied record, in log\n"
     "order, to the JetStream stream STREAM (created if\n"
     "missing), and snapshots beside it on STREAM_SNAP;\n"
     "a list names the servers of one cluster",
     custom(take_publish)},
    {"--publish-replicas", "N",
     "copies of both streams the cluster keeps when it\n"
     "creates them (1..5; default 1, for one server; 3\n"
     "for a three-server cluster); an existing stream\n"
     "with other settings is reported, not changed",
     number(1, 5, &Options::publish_replicas)},
    {"--publish-max-age", "S",
     "the log stream keeps messages S seconds (default\n"
     "86400; applies when the stream is created)",
     number(1, 365 * 86400, &Options::publish_max_age_s)},
    {"--publish-max-bytes", "N", "...and at most N bytes, K/M/G allowed (default 1G)",
     number(1 << 20, uint64_t{1} << 40, &Options::publish_max_bytes, true)},
    {"--publish-buffer", "N",
     "bytes of records kept while the bus is away\n"
     "(default 256M); past it the records are dropped and\n"
     "their state is published as a snapshot on return",
     number(1 << 20, uint64_t{1} << 36, &Options::publish_buffer, true)},
    {"--publish-snapshot-every", "N",
     "a snapshot on the bus every N records\n"
     "(default 50000)...",
     number(100, uint64_t{1} << 40, &Options::publish_snapshot_every)},
    {"--publish-snapshot-interval", "S",
     "...or every S seconds with any record\n"
     "(default 60)",
     number(1, 30 * 86400, &Options::publish_snapshot_interval_s)},
    {"--retain-ended", "DURATION",
     "retention horizon in feed time: an event that ended\n"
     "or was removed leaves the state (REST answers it as\n"
     "unknown) once the feed's newest `at` is this far\n"
     "past its last record; N followed by d, h, m or s\n"
     "(default 96h, above the 72 h window for corrected\n"
     "results; shorter only for tests and soaks)",
     custom(take_retain_ended)},
    {"--history", "on|off",
     "the odds history of GET /v1/odds/history: a point\n"
     "per outcome each time a record moves its price,\n"
     "flags or line `s`, made off the applying thread\n"
     "and kept in memory until its event leaves at the\n"
     "retention horizon (default on)",
     custom(take_history)},
    {"--history-bytes", "BYTES",
     "memory bound of the odds history: past it the\n"
     "oldest points go first and answers say\n"
     "`held_from` (default 256M)",
     number(64 << 10, uint64_t{1} << 40, &Options::history_bytes, true)},
    {"--resume-window", "SPEC",
     "what /pt-ws and /ws keep for `resume=EPOCH:SEQ`:\n"
     "BYTES[K|M|G] and/or SECONDS followed by s, comma-\n"
     "separated (default 128M,60s)",
     custom(take_resume_window)},
    {"--keys", "FILE", "API keys (docs/api.md)", text(&Options::keys)},
    {"--catalog", "FILE",
     "market catalog (default: data/catalog.json as built\n"
     "into the binary; tools/catalog/gen_catalog.py);\n"
     "read again on SIGHUP and every --catalog-reload:\n"
     "a changed file replaces the catalog (new ETag), a\n"
     "bad one is logged and the old catalog kept",
     text(&Options::catalog)},
    {"--catalog-reload", "DURATION",
     "how often --catalog FILE is read again: N followed\n"
     "by d, h, m or s, or 0 = only on SIGHUP (default 1h)",
     custom(take_catalog_reload)},
    {"--progress", "SECONDS",
     "interval of the progress line on stderr (default 5;\n"
     "0 = off)",
     custom(take_progress)},
    {"--exit-after-replay", "", "exit once a replay is applied (benchmarks, tests)",
     toggle(&Options::exit_after_replay)},
    {"--header-timeout", "MS",
     "close a connection whose request is not complete\n"
     "this long after its first byte (default 10000)",
     number(1, 3'600'000, &Options::header_timeout_ms)},
    {"--idle-timeout", "MS",
     "close keep-alive connections idle this long\n"
     "(default 60000)",
     number(1, 3'600'000, &Options::idle_timeout_ms)},
    {"--http-max-unsent", "BYTES",
     "an HTTP connection that owes its client more than\n"
     "this (cached answers counted by their size) is not\n"
     "read: its pipelined requests wait (default 4M)",
     number(64 * 1024, uint64_t{1} << 32, &Options::http_max_unsent, true)},
    {"--http-max-unsent-total", "BYTES",
     "all HTTP connections together: past this the one\n"
     "that has gone longest without write progress is\n"
     "closed, then the next (default 1G)",
     number(1 << 20, uint64_t{1} << 40, &Options::http_max_unsent_total, true)},
    {"--http-sndbuf", "BYTES",
     "SO_SNDBUF of each HTTP connection (the kernel\n"
     "doubles it): what a slow reader can park in the\n"
     "kernel, and what one write copies there; a\n"
     "connection that drains a full buffer within 2 ms\n"
     "has it doubled, up to 8x (default 128K; 0 = the\n"
     "kernel's autotuning, megabytes a connection on\n"
     "loopback)",
     number(0, uint64_t{64} << 20, &Options::http_sndbuf, true)},
    {"--http-connections-per-address", "N",
     "HTTP connections a client address may hold on the\n"
     "keyless routes (pages, /healthz); one more: 429\n"
     "and closed (default 256; 0 = unbounded; keys have\n"
     "their own http_connections)",
     number(0, 1'000'000, &Options::http_per_address)},
    {"--http-threads", "N",
     "REST loops, each on its own thread (1..64; default\n"
     "half the cores, at least 1, at most 4); one\n"
     "listening socket, connections dealt in turn",
     number(1, 64, &Options::http_threads)},
    {"--rate-window", "SECONDS",
     "rate-limit window (default 60, as docs/api.md says;\n"
     "shorter only to test resets)",
     number(1, 3600, &Options::rate_window_s)},
    {"--ws-update", "MS", "/ws live_update at most this often (default 1000)",
     number(10, 3'600'000, &Options::ws_update_ms)},
    {"--ws-ping", "MS",
     "/ws and /pt-ws heartbeat: ping interval; a client\n"
     "without a pong for two intervals is closed\n"
     "(default 30000)",
     number(100, 3'600'000, &Options::ws_ping_ms)},
    {"--ws-compression", "off|shared",
     "permessage-deflate on /ws and /pt-ws: shared (the\n"
     "default) answers a client's offer and compresses\n"
     "each frame once for all the streams that\n"
     "negotiated it; off never negotiates it",
     custom(take_ws_compression)},
    {"--max-queue-bytes", "N",
     "per-stream send queue bound; a subscriber past it\n"
     "is closed with 1008 (default 8388608)",
     number(64 * 1024, uint64_t{1} << 32, &Options::max_queue_bytes)},
    {"--slow-timeout", "SECONDS",
     "close (1008) a stream whose writes have not\n"
     "progressed for this long, or that has held more\n"
     "than a quarter of --max-queue-bytes for this long\n"
     "(default 30; 0 = off)",
     number(0, 3600, &Options::slow_timeout_s)},
    {"--relay-threads", "N",
     "relay loops the streams are spread over (each a\n"
     "thread; every batch is encoded once for all of\n"
     "them); default 0: half the cores, at least 1, at\n"
     "most 16",
     number(0, 256, &Options::relay_threads)},
    {"--relay-io", "writev|uring",
     "how a relay loop's turn of writes reaches the\n"
     "sockets: writev (the default), one writev per\n"
     "connection; uring, one io_uring submission for\n"
     "all of them (writev where the kernel or the\n"
     "build has no io_uring: said once at start)",
     custom(take_relay_io)},
    {"--relay-pace", "PCT",
     "near saturation, the largest share of a relay\n"
     "loop's time its write passes may take: a batch\n"
     "that comes sooner waits for the next pass, held\n"
     "at most the last pass's time x (100-PCT)/PCT;\n"
     "fewer, larger writes (default 0 = off: every\n"
     "batch written as it comes)",
     number(0, 100, &Options::relay_pace)},
    {"--handshake-rate", "N",
     "stream handshakes (/ws, /pt-ws) per minute per\n"
     "connection slot of a key, apart from the REST rate\n"
     "limit; past it 429 (default 12: a burst of 60 for\n"
     "5 slots; 0 = unbounded; sandbox keys: unbounded)",
     number(0, 100'000, &Options::handshake_rate)},
    {"--stream-sports", "LIST",
     "sport ids whose live events have a stream add-on\n"
     "(default 1,2,5; empty = none)",
     custom(take_stream_sports)},
    {"--stream-ttl", "SECONDS", "lifetime of signed stream URLs (default 3600)",
     number(1, 30 * 86400, &Options::stream_ttl_s)},
    {"--webhook-retries", "N",
     "attempts per event_ended / settlement_changed\n"
     "callback before it counts as dropped (default 8)",
     number(1, 1000, &Options::webhook_retries)},
    {"--webhook-timeout", "MS", "one webhook POST, connect to answer (default 3000)",
     number(10, 600'000, &Options::webhook_timeout_ms)},
    {"--access-log", "FILE|-",
     "one JSON line per REST request and per stream open\n"
     "and close (client, key name, path, status, bytes,\n"
     "time; never a key) to FILE, or - for standard\n"
     "output; reopened on SIGHUP (default: off)",
     text(&Options::access_log)},
    {"--webhook-ca", "FILE",
     "PEM certificates trusted for https:// webhook\n"
     "endpoints besides the system's CA store (a private\n"
     "CA); certificates and host names are always checked",
     text(&Options::webhook_ca)},
    {"--trust-proxy", "CIDR[,CIDR]",
     "reverse proxies in front of the server: only from a\n"
     "peer in these networks are X-Forwarded-For (the\n"
     "right-most address not itself trusted is the\n"
     "client) and a PROXY protocol v1 line believed, for\n"
     "allow_ips; from any other peer both are ignored\n"
     "and a PROXY line is a bad request (default: none;\n"
     "docs/deploy.md)",
     custom(take_trust_proxy)},
    {"--public-url", "URL",
     "where clients reach the server, e.g.\n"
     "https://odds.example.com: the base of the URLs it\n"
     "hands out (stream add-on) and an own origin of the\n"
     "explorer's demo key (default: http:// and the\n"
     "request's Host)",
     custom(take_public_url)},
    {"--version", "", "the version and the commit it was built from", toggle(&Options::version)},
    {"--help", "", "this text", toggle(&Options::help)},
};

const char kIntro[] = R"(Usage: oddsrelay [options]

A low-latency sports-odds relay: applies an upstream feed to an immutable
snapshot store and serves it (REST, /ws, /pt-ws; see docs/api.md).

Options:
)";
constexpr size_t kHelpColumn = 25;

const Flag* find_flag(std::string_view name) {
  if (name == "-h") name = "--help";
  for (const Flag& f : kFlags)
    if (name == f.name) return &f;
  return nullptr;
}

bool take_number(const Flag& f, const std::string& v, Options& out, std::string& err) {
  const Take& t = f.take;
  std::string_view num = v;
  uint64_t n = 0, mult = t.bytes ? take_size_suffix(num) : 1;
  if (!parse_u64(num, n) || n > t.max / mult || n * mult < t.min || n * mult > t.max) {
    err = std::string("bad ") + f.name + " '" + v + "' (" + std::to_string(t.min) + ".." + std::to_string(t.max) + ")";
    return false;
  }
  out.*(t.number) = static_cast<int64_t>(n * mult);
  return true;
}

bool take_value(const Flag& f, const std::string& v, Options& out, std::string& err) {
  if (f.take.text) {
    out.*(f.take.text) = v;
    return true;
  }
  if (f.take.number) return take_number(f, v, out, err);
  return f.take.parse(v, out, err);
}

// What no single flag can judge: the flags that exclude each other, and the
// defaults that depend on the machine.
bool check_together(Options& out, std::string& err) {
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

}  // namespace

std::string usage() {
  std::string s = kIntro;
  for (const Flag& f : kFlags) {
    std::string left = std::string("  ") + f.name + (*f.value ? " " : "") + f.value;
    if (left.size() < kHelpColumn)
      left.resize(kHelpColumn, ' ');
    else
      left += "\n" + std::string(kHelpColumn, ' ');
    s += left;
    for (const char* p = f.help; *p; ++p) {
      s += *p;
      if (*p == '\n') s.append(kHelpColumn, ' ');
    }
    s += '\n';
  }
  return s;
}

bool parse_cli(int argc, const char* const* argv, Options& out, std::string& err) {
  for (int i = 1; i < argc; ++i) {
    std::string name = argv[i], value;
    bool inline_value = false;  // --flag=value
    if (size_t eq = name.find('='); name.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
      inline_value = true;
    }
    const Flag* f = find_flag(name);
    if (!f) {
      err = "unknown option '" + name + "'";
      return false;
    }
    if (f->take.toggle) {
      if (inline_value) {
        err = name + " takes no value";
        return false;
      }
      out.*(f->take.toggle) = true;
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= argc) {
        err = name + " needs a value";
        return false;
      }
      value = argv[++i];
    }
    if (!take_value(*f, value, out, err)) return false;
  }
  return check_together(out, err);
}

int64_t default_http_threads(unsigned cores) { return std::clamp<int64_t>(cores / 2, 1, 4); }

}  // namespace oddsrelay
