// oddsrelay: wires the data path together (docs/architecture.md). Start-up
// order: parse the command line, start the listener (503 until ready),
// recover the log from --data-dir (so state is back before anything is
// served), attach the journal as the pipeline's durable stage and the
// capture and outputs as sinks, start the engine thread, then the source.
// An edge (--feed nats://) joins the bus's log instead of recovering a data
// dir, still behind the 503s; an ingest (--publish) adds the publisher as a
// sink after the journal.
// The main thread only waits for signals and prints the progress line;
// shutdown runs the same order backwards so that every applied record
// reaches the journal.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <stdexcept>
#include <thread>

#include "engine/core/pipeline.h"
#include "engine/core/state_digest.h"
#include "engine/history/history_recorder.h"
#include "engine/history/history_store.h"
#include "engine/sources/sources.h"
#include "engine/storage/data_dir.h"
#include "engine/storage/feed_file.h"
#include "engine/storage/history_recovery.h"
#include "engine/storage/log_writer.h"
#include "oddsrelay_version.h"
#include "protocol/api/access_log.h"
#include "protocol/api/api_keys.h"
#include "relay/relay_server.h"
#include "relay/webhooks/webhooks.h"
#include "rest/http_server.h"
#include "rest/metrics_endpoint.h"
#include "rest/rest_api.h"
#include "tools/oddsrelay/bus_node.h"
#include "tools/oddsrelay/catalog_reload.h"
#include "tools/oddsrelay/cli.h"
#include "tools/oddsrelay/node_metrics.h"

using namespace oddsrelay;

namespace {

// Prints "oddsrelay: <why>" and gives the exit code back, for the steps' early returns.
int fail(int code, const std::string& why) {
  std::fprintf(stderr, "oddsrelay: %s\n", why.c_str());
  return code;
}

// The progress line's fields after "applied=N (R/s)", each named and read
// once; ` events` before live= groups the four event counts.
struct ProgressField {
  const char* name;
  uint64_t (*read)(const Engine&, const Source&, const Snapshot&);
};
constexpr ProgressField kProgressFields[] = {
    {"skipped", [](const Engine& e, const Source&, const Snapshot&) { return e.skipped(); }},
    {"malformed", [](const Engine&, const Source& src, const Snapshot&) { return src.status().malformed.load(); }},
    {"events live", [](const Engine&, const Source&, const Snapshot& s) { return s.listed_live - s.ended_live; }},
    {"prematch", [](const Engine&, const Source&, const Snapshot& s) { return s.listed_prematch - s.ended_prematch; }},
    {"markets", [](const Engine&, const Source&, const Snapshot& s) { return s.markets; }},
    {"outcomes", [](const Engine&, const Source&, const Snapshot& s) { return s.outcomes; }},
    {"seq", [](const Engine&, const Source&, const Snapshot& s) { return s.seq; }},
    {"held", [](const Engine&, const Source&, const Snapshot& s) { return uint64_t{s.events.size()}; }},
    {"ended", [](const Engine&, const Source&, const Snapshot& s) { return s.ended; }},
    {"evicted", [](const Engine&, const Source&, const Snapshot& s) { return s.evicted; }},
};

void print_progress(const Engine& engine, const Source& src, uint64_t& last_applied, double interval_s) {
  SnapshotPtr s = engine.current();
  uint64_t applied = engine.applied();
  double rate = interval_s > 0 ? static_cast<double>(applied - last_applied) / interval_s : 0;
  last_applied = applied;
  std::string line = "progress: applied=" + std::to_string(applied);
  char buf[48];
  std::snprintf(buf, sizeof buf, " (%.0f/s)", rate);
  line += buf;
  for (const ProgressField& f : kProgressFields)
    line += std::string(" ") + f.name + "=" + std::to_string(f.read(engine, src, *s));
  if (src.status().done) line += " feed=done";
  std::fprintf(stderr, "%s\n", line.c_str());
}

// The node's parts, declared in the order they are built: members are
// destroyed backwards, as the shutdown step stops them.
struct Node {
  explicit Node(const Options& o) : opt(o) {}
  const Options& opt;
  std::string demo_key;
  std::unique_ptr<Published<api::KeyStore>> key_store;
  std::unique_ptr<CatalogSource> catalog_source;
  CatalogPtr catalog;
  std::unique_ptr<CatalogReload> catalog_reload;
  sigset_t sigs;
  Engine engine;
  // The listener starts before the journal is replayed, so that /healthz
  // can say "not yet" (503) to a load balancer; every other route answers
  // 503 too until `ready`. The REST thread reads the parts below only
  // after it has seen `ready` (acquire), which is stored once they exist.
  std::atomic<bool> ready{false};
  std::unique_ptr<relay::RelayServer> relay;
  std::unique_ptr<relay::Webhooks> webhooks;
  std::unique_ptr<Source> source;
  const Pipeline* feed_pipeline = nullptr;  // for feed.batches; set before `ready`
  std::unique_ptr<LogWriter> journal;
  // The bus: an edge's source (--feed nats://) or an ingest's output
  // (--publish); one connection either way.
  bus::NatsLink link;
  bus::JoinResult joined;
  std::unique_ptr<bus::BusPublisher> publisher;
  metrics::Registry metrics_registry;  // GET /metrics (node_metrics.h)
  int64_t started_ms = 0;
  std::unique_ptr<rest::RestApi> api;
  rest::HttpServerOptions http_opts;
  std::unique_ptr<rest::HttpServer> http;
  std::unique_ptr<rest::MetricsHandler> metrics_handler;
  std::unique_ptr<rest::HttpServer> metrics_http;
  std::unique_ptr<FeedFileWriter> capture;
  // The odds history (--history): the store exists from the start, for the
  // REST inputs; the recorder is a sink like the relay.
  std::unique_ptr<history::HistoryStore> history;
  std::unique_ptr<history::HistoryRecorder> history_recorder;
  // With --data-dir: the history's files, read back by the restart, which
  // then leaves the store rebuilt or seeded (history_recovery.h); what it
  // leaves for after ready, the recorder's thread finishes first.
  std::unique_ptr<history::HistorySegments> history_files;
  std::unique_ptr<HistoryRestart> history_restart;
  std::unique_ptr<Pipeline> pipeline;
  const char* shown_host = nullptr;
};

// Keys, catalog and the files the options name: a bad one is a start-up
// error (exit 2), before any work.
int load_inputs(Node& n) {
  const Options& opt = n.opt;
  try {
    n.key_store = std::make_unique<Published<api::KeyStore>>(opt.keys.empty() ? api::KeyStore::demo(n.demo_key)
                                                                              : api::KeyStore::load(opt.keys));
    n.catalog_source = std::make_unique<CatalogSource>(opt.catalog);
  } catch (const std::exception& e) {
    return fail(2, e.what());
  }
  std::string error;
  if (!opt.access_log.empty() && !access_log::log().open(opt.access_log, error)) return fail(2, error);
  if (!opt.webhook_ca.empty() && !relay::TlsClientContext::create(opt.webhook_ca, error))
    return fail(2, "--webhook-ca: " + error);
  if (opt.feed.kind == FeedSpec::Kind::Replay && access(opt.feed.path.c_str(), R_OK) != 0)
    return fail(2, "cannot read replay file " + opt.feed.path);
  n.catalog = n.catalog_source->current();
  std::fprintf(stderr, "oddsrelay: catalog %s: %zu markets, %zu sports\n", n.catalog->version().c_str(),
               n.catalog->markets().size(), n.catalog->sports().size());
  n.catalog_reload = std::make_unique<CatalogReload>(*n.catalog_source, opt.catalog_reload_ms);
  return 0;
}

void take_signals(Node& n) {
  // A peer that vanishes mid-write must cost an EPIPE on that socket, not
  // the process.
  signal(SIGPIPE, SIG_IGN);
  // Signals are taken by the main thread only: block them before any
  // thread starts so every thread inherits the mask.
  sigemptyset(&n.sigs);
  sigaddset(&n.sigs, SIGINT);
  sigaddset(&n.sigs, SIGTERM);
  sigaddset(&n.sigs, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &n.sigs, nullptr);
}

// An edge delivers while it is connected to the bus and following the log,
// whether or not records are arriving right now; any other source once it
// has pushed records and has not failed (`error` is written before `done`
// is set, so it is read only after `done`).
bool upstream_ready(const Source& source) {
  if (const auto* follower = dynamic_cast<const BusSource*>(&source)) return follower->upstream_ready();
  const SourceStatus& st = source.status();
  return st.records.load() > 0 && !(st.done.load() && !st.error.empty());
}

const char* source_name(FeedSpec::Kind kind) {
  switch (kind) {
    case FeedSpec::Kind::Sim:
      return "sim";
    case FeedSpec::Kind::Replay:
      return "replay";
    case FeedSpec::Kind::Bus:
      return "bus";
    default:
      return "none";
  }
}

void write_feed_status(json::Writer& w, const Node& n) {
  w.StartObject();
  w.Key("source");
  w.String(source_name(n.opt.feed.kind));
  w.Key("records_applied");
  w.Uint64(n.engine.applied());
  w.Key("records_skipped");
  w.Uint64(n.engine.skipped());
  w.Key("batches");  // published by the engine; relay.batches trails it while the relay catches up
  w.Uint64(n.feed_pipeline->batches());
  w.Key("malformed");
  w.Uint64(n.source->status().malformed.load());
  w.Key("done");
  w.Bool(n.source->status().done.load());
  w.EndObject();
}

void write_bus_status(json::Writer& w, const Node& n) {
  if (const auto* follower = dynamic_cast<const BusSource*>(n.source.get()))
    write_follower_status(w, n.link, *follower);
  else if (n.publisher)
    write_publisher_status(w, n.link, *n.publisher);
  else
    w.Null();
}

// What REST reads of the node: the parts it serves from and, for
// /v1/status, a writer per part (read only once `ready` is set).
rest::RestInputs rest_inputs(Node& n) {
  const Options& opt = n.opt;
  rest::RestInputs in;
  in.snapshots = &n.engine.store();
  in.history = n.history.get();
  in.history_loading = [&n] { return n.history_recorder && n.history_recorder->loading(); };
  in.keys = n.key_store.get();
  in.catalog = n.catalog;
  in.catalog_updates = &n.catalog_source->published();
  in.stream.sports = opt.stream_sports;
  in.stream.ttl_s = opt.stream_ttl_s;
  in.rate_window_s = static_cast<int>(opt.rate_window_s);
  in.http_threads = static_cast<uint32_t>(opt.http_threads);
  in.handshakes_per_slot = static_cast<uint32_t>(opt.handshake_rate);
  in.http_per_address = static_cast<uint32_t>(opt.http_per_address);
  in.ready = &n.ready;
  in.trusted_proxies = opt.trust_proxy;
  in.public_url = opt.public_url;
  in.open_stream = [&n](api::StreamTicket t, int fd, std::string pending) {
    n.relay->adopt(std::move(t), fd, std::move(pending));
  };
  in.relay_status = [&n](json::Writer& w) { n.relay->write_status(w); };
  in.webhook_status = [&n](json::Writer& w) { n.webhooks->write_status(w); };
  in.log_status = [&n](json::Writer& w) { write_log_status(w, n.journal.get(), n.opt.data_dir); };
  if (!n.opt.data_dir.empty() && n.history)
    in.history_files_status = [&n](json::Writer& w) {
      w.Key("files");
      w.Uint64(n.history_files ? n.history_files->files() : 0);
      w.Key("file_bytes");
      w.Uint64(n.history_files ? n.history_files->bytes() : 0);
    };
  in.downstream_clients = [&n] { return n.relay->clients(); };
  in.upstream_ready = [&n] { return upstream_ready(*n.source); };
  in.bus_status = [&n](json::Writer& w) { write_bus_status(w, n); };
  in.feed_status = [&n](json::Writer& w) { write_feed_status(w, n); };
  in.started_ms = n.started_ms;
  if (opt.metrics_port == 0) in.metrics = &n.metrics_registry;  // else on its own listener
  return in;
}

// The REST listener (503 until ready) and, with --metrics-listen, the
// metrics one; /metrics reads the same parts as /v1/status.
int start_listeners(Node& n) {
  const Options& opt = n.opt;
  n.started_ms = wall_ms();
  n.api = std::make_unique<rest::RestApi>(rest_inputs(n));
  n.http_opts.host = opt.host;
  n.http_opts.port = opt.port;
  n.http_opts.header_timeout_ms = static_cast<int>(opt.header_timeout_ms);
  n.http_opts.idle_timeout_ms = static_cast<int>(opt.idle_timeout_ms);
  n.http_opts.max_unsent = static_cast<size_t>(opt.http_max_unsent);
  n.http_opts.max_unsent_total = static_cast<size_t>(opt.http_max_unsent_total);
  n.http_opts.sndbuf = static_cast<size_t>(opt.http_sndbuf);
  n.http_opts.threads = static_cast<uint32_t>(opt.http_threads);
  n.http_opts.trusted_proxies = &opt.trust_proxy;
  n.http = std::make_unique<rest::HttpServer>(n.http_opts, *n.api);
  n.api->set_server(n.http.get());
  register_node_metrics(n.metrics_registry, NodeParts{n.ready, n.engine, n.feed_pipeline, n.relay, n.journal,
                                                      n.publisher, n.source, n.link, *n.http, n.started_ms});
  n.metrics_handler = std::make_unique<rest::MetricsHandler>(n.metrics_registry);
  std::string err;
  if (!n.http->start(err)) return fail(1, err);
  n.shown_host = opt.host == "0.0.0.0" ? "127.0.0.1" : opt.host.c_str();
  std::fprintf(stderr, "oddsrelay: listening on %s:%u (503 until the state is recovered)\n", n.shown_host, opt.port);
  if (opt.metrics_port == 0) return 0;
  rest::HttpServerOptions mo = n.http_opts;
  mo.host = opt.metrics_host;
  mo.port = opt.metrics_port;
  n.metrics_http = std::make_unique<rest::HttpServer>(mo, *n.metrics_handler);
  if (!n.metrics_http->start(err)) return fail(1, "metrics: " + err);
  std::fprintf(stderr, "oddsrelay: metrics on http://%s:%u/metrics (no key)\n", opt.metrics_host.c_str(),
               n.metrics_http->port());
  return 0;
}

// An edge serves nothing before it holds a position of the bus's log.
int join_bus_log(Node& n) {
  std::string err;
  if (!join_bus(n.link, n.engine, n.sigs, n.joined, err)) return fail(1, err);
  const bus::JoinResult& j = n.joined;
  const std::string from = j.from_snapshot ? "a snapshot (" + std::to_string(j.snapshot_events) + " events, " +
                                                 std::to_string(j.snapshot_bytes) + " bytes, " +
                                                 std::to_string(j.chunks) + " chunks)"
                                           : "the log's start";
  std::fprintf(stderr,
               "oddsrelay: joined log %s at seq %" PRIu64 " from %s in %.0f ms; following %s from stream seq %" PRIu64
               "\n",
               j.epoch.c_str(), j.seq, from.c_str(), j.millis, n.link.url().str().c_str(), j.next_stream_seq);
  return 0;
}

void print_recovery(const DataDirRecovery& r, int64_t retain_ended_ms) {
  for (const auto& why : r.skipped_snapshots)
    std::fprintf(stderr, "oddsrelay: snapshot skipped, falling back: %s\n", why.c_str());
  std::fprintf(stderr,
               "oddsrelay: log %s%s: snapshot at seq %" PRIu64 " (%" PRIu64 " events), %" PRIu64
               " journal records replayed, %" PRIu64 " bad%s%s; seq=%" PRIu64 " in %.0f ms\n",
               r.epoch.c_str(), r.created ? " (new)" : "", r.snapshot_seq, r.snapshot_events, r.replayed, r.bad_records,
               r.torn_tail ? ", torn tail cut: " : "",
               r.torn_tail ? (std::to_string(r.truncated_bytes) + " bytes").c_str() : "", r.seq, r.millis);
  if (r.snapshot_retain_ended_ms != 0 && r.snapshot_retain_ended_ms != retain_ended_ms)
    std::fprintf(stderr,
                 "oddsrelay: note: the snapshot was kept with --retain-ended %" PRId64 " s; going on with %" PRId64
                 " s (a replay of this log with one horizon throughout would differ)\n",
                 r.snapshot_retain_ended_ms / 1000, retain_ended_ms / 1000);
}

// The restart's history line: what the files held and what became of them.
void print_history_recovery(const HistoryRecovery& hr) {
  const history::SegmentLoad& l = hr.load;
  // One write: the line is read by tests while the node runs.
  char line[1024];
  int n = std::snprintf(line, sizeof line,
                        "oddsrelay: history: %" PRIu64 " files, %" PRIu64 " batches to seq %" PRIu64 "%s%s, %" PRIu64
                        " journal records after them; %s%s",
                        l.files, l.batches, l.seq, l.torn_tail ? ", torn tail cut: " : "",
                        l.torn_tail ? (std::to_string(l.cut_bytes) + " bytes").c_str() : "", hr.replayed,
                        hr.rebuilt ? "rebuilt" : "seeded from the recovered state: ", hr.why_seeded.c_str());
  const auto more = [&](const char* fmt, auto v) {
    if (n > 0 && static_cast<size_t>(n) < sizeof line)
      n += std::snprintf(line + n, sizeof line - static_cast<size_t>(n), fmt, v);
  };
  if (hr.forgotten) more("; %" PRIu64 " events the state no longer holds left", hr.forgotten);
  if (hr.deferred) more("; read after ready in %.0f ms", hr.millis);
  std::fprintf(stderr, "%s\n", line);
}

// The history's files and the log together (history_recovery.h).
DataDirRecovery recover_history(Node& n) {
  n.history_files = std::make_unique<history::HistorySegments>(n.opt.data_dir);
  n.history_restart = std::make_unique<HistoryRestart>(*n.history, *n.history_files);
  DataDirRecovery r = n.history_restart->recover(n.opt.data_dir, n.engine);
  if (n.history_restart->pending())
    std::fprintf(stderr,
                 "oddsrelay: history: its files are read after ready; /v1/odds/history and /v1/odds?at= answer 503 "
                 "until then\n");
  else
    print_history_recovery(n.history_restart->result());
  return r;
}

// The log first: state is back before anything is served; the journal is
// then the pipeline's durable stage.
int recover_log(Node& n) {
  const Options& opt = n.opt;
  try {
    DataDirRecovery r = n.history ? recover_history(n) : recover_data_dir(opt.data_dir, n.engine);
    print_recovery(r, opt.retain_ended_ms);
    LogOptions lo;
    if (n.history_files) lo.keep_after = [files = n.history_files.get()] { return files->written_seq(); };
    lo.snapshot_records = static_cast<uint64_t>(opt.snapshot_every);
    lo.snapshot_journal_pct = static_cast<uint32_t>(opt.snapshot_journal_pct);
    lo.snapshot_seconds = static_cast<int>(opt.snapshot_interval_s);
    auto lw = std::make_unique<LogWriter>(opt.data_dir, lo);
    std::string err;
    if (!lw->open(r, err)) throw std::runtime_error(err);
    n.journal = std::move(lw);
  } catch (const std::exception& e) {
    return fail(1, e.what());
  }
  n.pipeline->set_log(n.journal.get());
  return 0;
}

// The engine's starting state: the bus's log (an edge), the data dir's, or
// a new epoch when no log is kept.
int build_log(Node& n) {
  const Options& opt = n.opt;
  n.pipeline = std::make_unique<Pipeline>(n.engine);
  n.feed_pipeline = n.pipeline.get();
  const std::string bus_url = opt.feed.kind == FeedSpec::Kind::Bus ? opt.feed.path : opt.publish;
  if (!bus_url.empty()) {
    bus::BusUrl url;
    std::string err;
    if (!bus::parse_bus_url(bus_url, url, err) ||
        !n.link.open(url, opt.publish.empty() ? "oddsrelay-edge" : "oddsrelay-ingest", err))
      return fail(2, err);
  }
  if (opt.feed.kind == FeedSpec::Kind::Bus) return join_bus_log(n);
  if (!opt.data_dir.empty()) return recover_log(n);
  n.engine.set_epoch(new_epoch());  // no log kept: every start is a new one
  n.engine.publish_restored();
  return 0;
}

// The sinks after the journal: the capture file and the bus publisher.
int build_recorders(Node& n) {
  const Options& opt = n.opt;
  std::string err;
  if (!opt.capture.empty()) {
    n.capture = std::make_unique<FeedFileWriter>(FeedFileWriter::Options{false, 0});
    if (!n.capture->open(opt.capture, err)) return fail(1, err);
    n.pipeline->add_sink(n.capture.get());
  }
  if (!opt.publish.empty()) {
    bus::PublisherOptions po;
    po.streams.max_age_s = opt.publish_max_age_s;
    po.streams.max_bytes = opt.publish_max_bytes;
    po.streams.replicas = static_cast<int>(opt.publish_replicas);
    po.buffer_bytes = static_cast<size_t>(opt.publish_buffer);
    po.snapshot_records = static_cast<uint64_t>(opt.publish_snapshot_every);
    po.snapshot_seconds = static_cast<int>(opt.publish_snapshot_interval_s);
    // The log continues on the bus after the state recovery left.
    n.publisher = std::make_unique<bus::BusPublisher>(n.link, po, n.engine.current());
    if (!n.publisher->start(err)) return fail(1, err);
    n.pipeline->add_sink(n.publisher.get());
  }
  return 0;
}

// The relay and the webhooks are sinks like the journal: they see every
// batch, from the first one the source produces.
void build_outputs(Node& n) {
  const Options& opt = n.opt;
  relay::RelayOptions relay_opts;
  relay_opts.live_update_ms = static_cast<int>(opt.ws_update_ms);
  relay_opts.ping_interval_ms = static_cast<int>(opt.ws_ping_ms);
  relay_opts.ws_compression = opt.ws_compression;
  relay_opts.io = opt.relay_uring ? relay::RelayOptions::Io::Uring : relay::RelayOptions::Io::Writev;
  relay_opts.pace_pct = static_cast<unsigned>(opt.relay_pace);
  relay_opts.max_queue_bytes = static_cast<size_t>(opt.max_queue_bytes);
  relay_opts.slow_timeout_ms = static_cast<int>(opt.slow_timeout_s * 1000);
  relay_opts.resume_window_bytes = static_cast<size_t>(opt.resume_window_bytes);
  relay_opts.resume_window_ms = static_cast<int>(opt.resume_window_s * 1000);
  relay_opts.threads =
      opt.relay_threads > 0 ? static_cast<unsigned>(opt.relay_threads) : relay::default_relay_threads();
  n.relay = std::make_unique<relay::RelayServer>(relay_opts, n.engine.store());
  n.pipeline->add_sink(n.relay.get());
  n.relay->start();
  relay::WebhookOptions hook_opts;
  hook_opts.max_attempts = static_cast<int>(opt.webhook_retries);
  hook_opts.timeout_ms = static_cast<int>(opt.webhook_timeout_ms);
  hook_opts.ca_file = opt.webhook_ca;
  n.webhooks = std::make_unique<relay::Webhooks>(hook_opts, *n.key_store);
  n.pipeline->add_sink(n.webhooks.get());
  n.webhooks->start();
  if (n.history) {
    // The history follows the records from the state the node starts at
    // (an edge's joined snapshot, a recovered data dir): held_from_seq.
    if (!n.history_files) n.history->seed(*n.engine.current());  // else the recovery did
    n.history_recorder = std::make_unique<history::HistoryRecorder>(*n.history, n.history_files.get());
    n.pipeline->add_sink(n.history_recorder.get());
    history::HistoryRecorder::First first;
    if (n.history_restart && n.history_restart->pending())
      first = [&n](const std::atomic<bool>& stopping) {
        // The e2e suite holds the read here while the file this names
        // exists, to see the node serve meanwhile (tests/e2e/test_history_restart.py).
        if (const char* hold = std::getenv("ODDSRELAY_TEST_HOLD_HISTORY_READ"))
          while (!stopping.load() && ::access(hold, F_OK) == 0)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        if (!n.history_restart->finish(&stopping)) return false;
        print_history_recovery(n.history_restart->result());
        return true;
      };
    n.history_recorder->start(std::move(first));
  }
}

// The feed last: everything it reaches exists. Then the node serves.
void start_source(Node& n) {
  const Options& opt = n.opt;
  n.pipeline->set_record_text(n.journal || n.capture || n.publisher);
  n.pipeline->start();
  if (opt.feed.kind == FeedSpec::Kind::Sim)
    n.source = std::make_unique<SimSource>(opt.feed.sim, *n.pipeline);
  else if (opt.feed.kind == FeedSpec::Kind::Replay)
    n.source = std::make_unique<ReplaySource>(opt.feed.path, opt.feed.speed, *n.pipeline);
  else if (opt.feed.kind == FeedSpec::Kind::Bus)
    n.source = std::make_unique<BusSource>(n.link, n.joined, *n.pipeline, opt.bus_stale_after_ms);
  else
    n.source = std::make_unique<NoSource>();
  n.source->start();
  std::fprintf(stderr, "oddsrelay: engine running, feed: %s\n", n.source->describe().c_str());
  n.ready.store(true, std::memory_order_release);

  std::fprintf(stderr, "oddsrelay: serving http://%s:%u/v1/status\n", n.shown_host, opt.port);
  if (opt.public_url.set())
    std::fprintf(stderr, "oddsrelay: public URL %s/v1/status (%zu trusted proxy networks)\n",
                 opt.public_url.base.c_str(), opt.trust_proxy.size());
  if (!n.demo_key.empty())
    std::fprintf(stderr,
                 "oddsrelay: demo API key (sandbox, all permissions): %s\n"
                 "  try: curl -H 'X-API-Key: %s' http://%s:%u/v1/live\n",
                 n.demo_key.c_str(), n.demo_key.c_str(), n.shown_host, opt.port);
}

// SIGHUP: reload the keys file (connections stay, the next request sees
// the new keys; a bad file keeps the old ones) and the catalog, and reopen
// the access log (logrotate has moved it).
void reload(Node& n) {
  std::string error;
  if (!access_log::log().reopen(error))
    std::fprintf(stderr, "oddsrelay: access log reopen failed, keeping the old file: %s\n", error.c_str());
  if (!n.opt.keys.empty()) {
    try {
      auto fresh = api::KeyStore::load(n.opt.keys);
      std::fprintf(stderr, "oddsrelay: keys reloaded: %zu keys\n", fresh->size());
      n.key_store->publish(std::move(fresh));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "oddsrelay: keys reload failed, keeping the old keys: %s\n", e.what());
    }
  }
  if (!n.opt.catalog.empty()) n.catalog_reload->now("SIGHUP");
}

// The main thread's work while the node runs: signals, scheduled catalog
// reloads and the progress line, until SIGINT/SIGTERM (or the replay's end
// with --exit-after-replay).
void serve_until_stopped(Node& n, uint64_t& last_applied) {
  const Options& opt = n.opt;
  last_applied = n.engine.applied();
  // A replay's end is noticed within a millisecond: benchmarks and tests
  // time the whole run.
  const double tick_s = opt.exit_after_replay ? 0.001 : (opt.progress_s > 0 ? opt.progress_s : 3600);
  double since_progress = 0;
  for (;;) {
    const double wait_s = n.catalog_reload->seconds_until_due(tick_s);
    timespec ts{static_cast<time_t>(wait_s), static_cast<long>((wait_s - static_cast<time_t>(wait_s)) * 1e9)};
    int sig = sigtimedwait(&n.sigs, nullptr, &ts);
    if (sig == SIGINT || sig == SIGTERM) return;
    if (sig == SIGHUP) {
      reload(n);
      continue;
    }
    n.catalog_reload->poll();
    since_progress += wait_s;
    if (opt.progress_s > 0 && since_progress >= opt.progress_s) {
      print_progress(n.engine, *n.source, last_applied, since_progress);
      since_progress = 0;
    }
    if (opt.exit_after_replay && n.source->status().done && n.pipeline->idle()) return;
  }
}

// The start-up order backwards, so that every applied record reaches the
// journal; the last line holds the state's digest.
int shut_down(Node& n, uint64_t& last_applied) {
  n.http->stop();  // no new streams
  if (n.metrics_http) n.metrics_http->stop();
  n.source->stop();
  n.pipeline->stop();
  // What the bus has not stored yet gets a few seconds (docs/architecture.md
  // "Scale-out": what a restart does with the rest).
  if (n.publisher) n.publisher->stop(5000);
  n.relay->stop();  // after the last batch: the pipeline calls into it until then
  n.webhooks->stop();
  if (n.history_recorder) n.history_recorder->stop();
  if (n.history_files) n.history_files->close();
  if (n.capture) n.capture->close();
  if (n.journal) n.journal->close();  // after the pipeline: every sealed batch is written
  n.publisher.reset();
  n.link.close();
  print_progress(n.engine, *n.source, last_applied, 0);
  SnapshotPtr s = n.engine.current();
  std::fprintf(stderr, "oddsrelay: stopped; state seq=%" PRIu64 " digest=%016" PRIx64 " epoch=%s\n", s->seq,
               state_digest(*s), s->epoch.c_str());
  if (!n.source->status().error.empty()) return fail(1, "feed error: " + n.source->status().error);
  return 0;
}

int run(const Options& opt) {
  Node n(opt);
  if (int rc = load_inputs(n)) return rc;
  take_signals(n);
  n.engine.set_retain_ended_ms(opt.retain_ended_ms);  // before any record: replays must evict alike
  if (opt.history) n.history = std::make_unique<history::HistoryStore>(static_cast<size_t>(opt.history_bytes));
  if (int rc = start_listeners(n)) return rc;
  if (int rc = build_log(n)) return rc;
  if (int rc = build_recorders(n)) return rc;
  build_outputs(n);
  start_source(n);
  uint64_t last_applied = 0;
  serve_until_stopped(n, last_applied);
  return shut_down(n, last_applied);
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  std::string err;
  if (!parse_cli(argc, argv, opt, err)) {
    std::fprintf(stderr, "oddsrelay: %s (see --help)\n", err.c_str());
    return 2;
  }
  if (opt.help) {
    std::fputs(usage().c_str(), stdout);
    return 0;
  }
  if (opt.version) {
    std::printf("oddsrelay %s (commit %s)\n", ODDSRELAY_VERSION, ODDSRELAY_COMMIT);
    return 0;
  }
  return run(opt);
}
