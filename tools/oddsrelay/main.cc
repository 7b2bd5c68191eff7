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
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <memory>
#include <stdexcept>

#include "engine/core/pipeline.h"
#include "engine/core/state_digest.h"
#include "engine/sources/sources.h"
#include "engine/storage/data_dir.h"
#include "engine/storage/feed_file.h"
#include "engine/storage/log_writer.h"
#include "oddsrelay_version.h"
#include "protocol/api/api_keys.h"
#include "relay/relay_server.h"
#include "relay/webhooks.h"
#include "rest/http_server.h"
#include "rest/metrics_endpoint.h"
#include "rest/rest_api.h"
#include "tools/oddsrelay/bus_node.h"
#include "tools/oddsrelay/catalog_reload.h"
#include "tools/oddsrelay/cli.h"
#include "tools/oddsrelay/node_metrics.h"

using namespace oddsrelay;

namespace {

void print_progress(const Engine& engine, const Source& src, uint64_t& last_applied, double interval_s) {
  SnapshotPtr s = engine.current();
  uint64_t applied = engine.applied();
  double rate = interval_s > 0 ? static_cast<double>(applied - last_applied) / interval_s : 0;
  last_applied = applied;
  std::fprintf(stderr,
               "progress: applied=%" PRIu64 " (%.0f/s) skipped=%" PRIu64 " malformed=%" PRIu64 " events live=%" PRIu64
               " prematch=%" PRIu64 " markets=%" PRIu64 " outcomes=%" PRIu64 " seq=%" PRIu64 " held=%zu ended=%" PRIu64
               " evicted=%" PRIu64 "%s\n",
               applied, rate, engine.skipped(), src.status().malformed.load(), s->listed_live, s->listed_prematch,
               s->markets, s->outcomes, s->seq, s->events.size(), s->ended, s->evicted,
               src.status().done ? " feed=done" : "");
}

int run(const Options& opt) {
  // Keys first: a bad keys file is a start-up error, before any work.
  std::string demo_key;
  std::shared_ptr<const rest::KeyStore> keys;
  try {
    keys = opt.keys.empty() ? rest::KeyStore::demo(demo_key) : rest::KeyStore::load(opt.keys);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "oddsrelay: %s\n", e.what());
    return 2;
  }
  Published<rest::KeyStore> key_store(keys);
  std::unique_ptr<CatalogSource> catalog_source;
  try {
    catalog_source = std::make_unique<CatalogSource>(opt.catalog);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "oddsrelay: %s\n", e.what());
    return 2;
  }

  if (!opt.webhook_ca.empty()) {
    std::string error;
    if (!relay::TlsClientContext::create(opt.webhook_ca, error)) {
      std::fprintf(stderr, "oddsrelay: --webhook-ca: %s\n", error.c_str());
      return 2;
    }
  }
  if (opt.feed.kind == FeedSpec::Kind::Replay && access(opt.feed.path.c_str(), R_OK) != 0) {
    std::fprintf(stderr, "oddsrelay: cannot read replay file %s\n", opt.feed.path.c_str());
    return 2;
  }
  CatalogPtr catalog = catalog_source->current();
  std::fprintf(stderr, "oddsrelay: catalog %s: %zu markets, %zu sports\n", catalog->version().c_str(),
               catalog->markets().size(), catalog->sports().size());
  CatalogReload catalog_reload(*catalog_source, opt.catalog_reload_ms);

  // A peer that vanishes mid-write must cost an EPIPE on that socket, not
  // the process.
  signal(SIGPIPE, SIG_IGN);
  // Signals are taken by the main thread only: block them before any
  // thread starts so every thread inherits the mask.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);

  Engine engine;
  engine.set_retain_ended_ms(opt.retain_ended_ms);  // before any record: replays must evict alike
  // The listener starts before the journal is replayed, so that /healthz
  // can say "not yet" (503) to a load balancer; every other route answers
  // 503 too until `ready`. The REST thread reads the components below only
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
  rest::RestContext ctx;
  ctx.snapshots = &engine.store();
  ctx.keys = &key_store;
  ctx.catalog = catalog;
  ctx.catalog_updates = &catalog_source->published();
  ctx.stream.sports = opt.stream_sports;
  ctx.stream.ttl_s = opt.stream_ttl_s;
  ctx.rate_window_s = static_cast<int>(opt.rate_window_s);
  ctx.http_threads = static_cast<uint32_t>(opt.http_threads);
  ctx.handshakes_per_slot = static_cast<uint32_t>(opt.handshake_rate);
  ctx.ready = &ready;
  ctx.trusted_proxies = opt.trust_proxy;
  ctx.public_url = opt.public_url;
  ctx.open_stream = [&relay](rest::StreamTicket t, int fd, std::string pending) {
    relay->adopt(std::move(t), fd, std::move(pending));
  };
  ctx.relay_status = [&relay](json::Writer& w) { relay->write_status(w); };
  ctx.webhook_status = [&webhooks](json::Writer& w) { webhooks->write_status(w); };
  ctx.log_status = [&journal, dir = opt.data_dir](json::Writer& w) {
    if (!journal) {
      w.Null();
      return;
    }
    const LogStats& st = journal->stats();
    w.StartObject();
    w.Key("data_dir");
    json::str(w, dir);
    w.Key("journal_records");
    w.Uint64(st.records.load());
    w.Key("journal_bytes");
    w.Uint64(st.bytes.load());
    w.Key("snapshots");
    w.Uint64(st.snapshots.load());
    w.Key("snapshot_failures");
    w.Uint64(st.snapshot_failures.load());
    w.Key("last_snapshot_seq");
    w.Uint64(st.last_snapshot_seq.load());
    w.Key("last_snapshot_bytes");
    w.Uint64(st.last_snapshot_bytes.load());
    w.Key("last_snapshot_ms");
    w.Uint64(st.last_snapshot_ms.load());
    w.Key("last_snapshot_copied");
    w.Uint64(st.last_snapshot_copied.load());
    w.Key("compaction_waits");
    w.Uint64(st.compaction_waits.load());
    w.Key("compaction_wait_ms");
    w.Uint64(st.compaction_wait_ms.load());
    w.Key("files_deleted");
    w.Uint64(st.files_deleted.load());
    w.Key("write_errors");
    w.Uint64(st.write_errors.load());
    w.EndObject();
  };
  ctx.downstream_clients = [&relay] { return relay->clients(); };
  ctx.upstream_ready = [&source] {
    // An edge delivers while it is connected to the bus and following the
    // log, whether or not records are arriving right now.
    if (const auto* follower = dynamic_cast<const BusSource*>(source.get())) return follower->upstream_ready();
    // Any other source: it has pushed records and has not failed (`error`
    // is written before `done` is set, so it is read only after `done`).
    const SourceStatus& st = source->status();
    return st.records.load() > 0 && !(st.done.load() && !st.error.empty());
  };
  ctx.bus_status = [&link, &source, &publisher](json::Writer& w) {
    if (const auto* follower = dynamic_cast<const BusSource*>(source.get()))
      write_follower_status(w, link, *follower);
    else if (publisher)
      write_publisher_status(w, link, *publisher);
    else
      w.Null();
  };
  ctx.started_ms = wall_ms();
  const std::string source_name = opt.feed.kind == FeedSpec::Kind::Sim      ? "sim"
                                  : opt.feed.kind == FeedSpec::Kind::Replay ? "replay"
                                  : opt.feed.kind == FeedSpec::Kind::Bus    ? "bus"
                                                                            : "none";
  ctx.feed_status = [&engine, &source, &feed_pipeline, source_name](json::Writer& w) {
    w.StartObject();
    w.Key("source");
    w.String(source_name.c_str());
    w.Key("records_applied");
    w.Uint64(engine.applied());
    w.Key("records_skipped");
    w.Uint64(engine.skipped());
    w.Key("batches");  // published by the engine; relay.batches trails it while the relay catches up
    w.Uint64(feed_pipeline->batches());
    w.Key("malformed");
    w.Uint64(source->status().malformed.load());
    w.Key("done");
    w.Bool(source->status().done.load());
    w.EndObject();
  };
  if (opt.metrics_port == 0) ctx.metrics = &metrics_registry;  // else on its own listener, below
  const int64_t started_ms = ctx.started_ms;
  rest::RestApi api(std::move(ctx));
  rest::HttpServerOptions http_opts;
  http_opts.host = opt.host;
  http_opts.port = opt.port;
  http_opts.header_timeout_ms = static_cast<int>(opt.header_timeout_ms);
  http_opts.idle_timeout_ms = static_cast<int>(opt.idle_timeout_ms);
  http_opts.threads = static_cast<uint32_t>(opt.http_threads);
  http_opts.trusted_proxies = &opt.trust_proxy;
  rest::HttpServer http(http_opts, api);
  api.set_server(&http);
  register_node_metrics(metrics_registry, NodeParts{ready, engine, feed_pipeline, relay, journal, publisher, source,
                                                    link, http, started_ms});
  rest::MetricsHandler metrics_handler(metrics_registry);
  std::unique_ptr<rest::HttpServer> metrics_http;
  std::string err;
  if (!http.start(err)) {
    std::fprintf(stderr, "oddsrelay: %s\n", err.c_str());
    return 1;
  }
  const char* shown_host = opt.host == "0.0.0.0" ? "127.0.0.1" : opt.host.c_str();
  std::fprintf(stderr, "oddsrelay: listening on %s:%u (503 until the state is recovered)\n", shown_host, opt.port);
  if (opt.metrics_port != 0) {
    rest::HttpServerOptions mo = http_opts;
    mo.host = opt.metrics_host;
    mo.port = opt.metrics_port;
    metrics_http = std::make_unique<rest::HttpServer>(mo, metrics_handler);
    if (!metrics_http->start(err)) {
      std::fprintf(stderr, "oddsrelay: metrics: %s\n", err.c_str());
      return 1;
    }
    std::fprintf(stderr, "oddsrelay: metrics on http://%s:%u/metrics (no key)\n", opt.metrics_host.c_str(),
                 metrics_http->port());
  }

  std::unique_ptr<FeedFileWriter> capture;
  Pipeline pipeline(engine);
  feed_pipeline = &pipeline;
  const std::string bus_url = opt.feed.kind == FeedSpec::Kind::Bus ? opt.feed.path : opt.publish;
  if (!bus_url.empty()) {
    bus::BusUrl url;
    if (!bus::parse_bus_url(bus_url, url, err) ||
        !link.open(url, opt.publish.empty() ? "oddsrelay-edge" : "oddsrelay-ingest", err)) {
      std::fprintf(stderr, "oddsrelay: %s\n", err.c_str());
      return 2;
    }
  }
  if (opt.feed.kind == FeedSpec::Kind::Bus) {
    // An edge serves nothing before it holds a position of the log.
    if (!join_bus(link, engine, sigs, joined, err)) {
      std::fprintf(stderr, "oddsrelay: %s\n", err.c_str());
      return 1;
    }
    std::fprintf(stderr,
                 "oddsrelay: joined log %s at seq %" PRIu64 " from %s in %.0f ms; following %s from stream seq %" PRIu64
                 "\n",
                 joined.epoch.c_str(), joined.seq,
                 joined.from_snapshot
                     ? ("a snapshot (" + std::to_string(joined.snapshot_events) + " events, " +
                        std::to_string(joined.snapshot_bytes) + " bytes, " + std::to_string(joined.chunks) + " chunks)")
                           .c_str()
                     : "the log's start",
                 joined.millis, link.url().str().c_str(), joined.next_stream_seq);
  } else if (opt.data_dir.empty()) {
    engine.set_epoch(new_epoch());  // no log kept: every start is a new one
    engine.publish_restored();
  } else {
    // The log first: state is back before anything is served.
    try {
      DataDirRecovery r = recover_data_dir(opt.data_dir, engine);
      for (const auto& why : r.skipped_snapshots)
        std::fprintf(stderr, "oddsrelay: snapshot skipped, falling back: %s\n", why.c_str());
      std::fprintf(stderr,
                   "oddsrelay: log %s%s: snapshot at seq %" PRIu64 " (%" PRIu64 " events), %" PRIu64
                   " journal records replayed, %" PRIu64 " bad%s%s; seq=%" PRIu64 " in %.0f ms\n",
                   r.epoch.c_str(), r.created ? " (new)" : "", r.snapshot_seq, r.snapshot_events, r.replayed,
                   r.bad_records, r.torn_tail ? ", torn tail cut: " : "",
                   r.torn_tail ? (std::to_string(r.truncated_bytes) + " bytes").c_str() : "", r.seq, r.millis);
      if (r.snapshot_retain_ended_ms != 0 && r.snapshot_retain_ended_ms != opt.retain_ended_ms)
        std::fprintf(stderr,
                     "oddsrelay: note: the snapshot was kept with --retain-ended %" PRId64 " s; going on with %" PRId64
                     " s (a replay of this log with one horizon throughout would differ)\n",
                     r.snapshot_retain_ended_ms / 1000, opt.retain_ended_ms / 1000);
      LogOptions lo;
      lo.snapshot_records = static_cast<uint64_t>(opt.snapshot_every);
      lo.snapshot_journal_pct = static_cast<uint32_t>(opt.snapshot_journal_pct);
      lo.snapshot_seconds = static_cast<int>(opt.snapshot_interval_s);
      auto lw = std::make_unique<LogWriter>(opt.data_dir, lo);
      if (!lw->open(r, err)) throw std::runtime_error(err);
      journal = std::move(lw);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "oddsrelay: %s\n", e.what());
      return 1;
    }
    pipeline.set_log(journal.get());
  }
  if (!opt.capture.empty()) {
    capture = std::make_unique<FeedFileWriter>(FeedFileWriter::Options{false, 0});
    if (!capture->open(opt.capture, err)) {
      std::fprintf(stderr, "oddsrelay: %s\n", err.c_str());
      return 1;
    }
    pipeline.add_sink(capture.get());
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
    publisher = std::make_unique<bus::BusPublisher>(link, po, engine.current());
    if (!publisher->start(err)) {
      std::fprintf(stderr, "oddsrelay: %s\n", err.c_str());
      return 1;
    }
    pipeline.add_sink(publisher.get());
  }
  // The relay is a sink like the journal: it sees every batch, from the
  // first one the source produces.
  relay::RelayOptions relay_opts;
  relay_opts.live_update_ms = static_cast<int>(opt.ws_update_ms);
  relay_opts.ping_interval_ms = static_cast<int>(opt.ws_ping_ms);
  relay_opts.max_queue_bytes = static_cast<size_t>(opt.max_queue_bytes);
  relay_opts.slow_timeout_ms = static_cast<int>(opt.slow_timeout_s * 1000);
  relay_opts.resume_window_bytes = static_cast<size_t>(opt.resume_window_bytes);
  relay_opts.resume_window_ms = static_cast<int>(opt.resume_window_s * 1000);
  relay_opts.threads =
      opt.relay_threads > 0 ? static_cast<unsigned>(opt.relay_threads) : relay::default_relay_threads();
  relay = std::make_unique<relay::RelayServer>(relay_opts, engine.store());
  pipeline.add_sink(relay.get());
  relay->start();
  relay::WebhookOptions hook_opts;
  hook_opts.max_attempts = static_cast<int>(opt.webhook_retries);
  hook_opts.timeout_ms = static_cast<int>(opt.webhook_timeout_ms);
  hook_opts.ca_file = opt.webhook_ca;
  webhooks = std::make_unique<relay::Webhooks>(hook_opts, key_store);
  pipeline.add_sink(webhooks.get());
  webhooks->start();
  pipeline.start();

  if (opt.feed.kind == FeedSpec::Kind::Sim)
    source = std::make_unique<SimSource>(opt.feed.sim, pipeline);
  else if (opt.feed.kind == FeedSpec::Kind::Replay)
    source = std::make_unique<ReplaySource>(opt.feed.path, opt.feed.speed, pipeline);
  else if (opt.feed.kind == FeedSpec::Kind::Bus)
    source = std::make_unique<BusSource>(link, joined, pipeline, opt.bus_stale_after_ms);
  else
    source = std::make_unique<NoSource>();
  source->start();
  std::fprintf(stderr, "oddsrelay: engine running, feed: %s\n", source->describe().c_str());
  ready.store(true, std::memory_order_release);

  std::fprintf(stderr, "oddsrelay: serving http://%s:%u/v1/status\n", shown_host, opt.port);
  if (opt.public_url.set())
    std::fprintf(stderr, "oddsrelay: public URL %s/v1/status (%zu trusted proxy networks)\n",
                 opt.public_url.base.c_str(), opt.trust_proxy.size());
  if (!demo_key.empty())
    std::fprintf(stderr,
                 "oddsrelay: demo API key (sandbox, all permissions): %s\n"
                 "  try: curl -H 'X-API-Key: %s' http://%s:%u/v1/live\n",
                 demo_key.c_str(), demo_key.c_str(), shown_host, opt.port);

  uint64_t last_applied = engine.applied();
  const double tick_s = opt.exit_after_replay ? 0.05 : (opt.progress_s > 0 ? opt.progress_s : 3600);
  double since_progress = 0;
  for (;;) {
    const double wait_s = catalog_reload.seconds_until_due(tick_s);
    timespec ts{static_cast<time_t>(wait_s), static_cast<long>((wait_s - static_cast<time_t>(wait_s)) * 1e9)};
    int sig = sigtimedwait(&sigs, nullptr, &ts);
    if (sig == SIGINT || sig == SIGTERM) break;
    if (sig == SIGHUP) {
      // Reload the keys file; connections stay, the next request sees the
      // new keys. A bad file keeps the old keys.
      if (!opt.keys.empty()) {
        try {
          auto fresh = rest::KeyStore::load(opt.keys);
          std::fprintf(stderr, "oddsrelay: keys reloaded: %zu keys\n", fresh->size());
          key_store.publish(std::move(fresh));
        } catch (const std::exception& e) {
          std::fprintf(stderr, "oddsrelay: keys reload failed, keeping the old keys: %s\n", e.what());
        }
      }
      if (!opt.catalog.empty()) catalog_reload.now("SIGHUP");
      continue;
    }
    catalog_reload.poll();
    since_progress += wait_s;
    if (opt.progress_s > 0 && since_progress >= opt.progress_s) {
      print_progress(engine, *source, last_applied, since_progress);
      since_progress = 0;
    }
    if (opt.exit_after_replay && source->status().done && pipeline.idle()) break;
  }

  http.stop();  // no new streams
  if (metrics_http) metrics_http->stop();
  source->stop();
  pipeline.stop();
  // What the bus has not stored yet gets a few seconds (docs/architecture.md
  // "Scale-out": what a restart does with the rest).
  if (publisher) publisher->stop(5000);
  relay->stop();  // after the last batch: the pipeline calls into it until then
  webhooks->stop();
  if (capture) capture->close();
  if (journal) journal->close();  // after the pipeline: every sealed batch is written
  publisher.reset();
  link.close();
  print_progress(engine, *source, last_applied, 0);
  SnapshotPtr s = engine.current();
  std::fprintf(stderr, "oddsrelay: stopped; state seq=%" PRIu64 " digest=%016" PRIx64 " epoch=%s\n", s->seq,
               state_digest(*s), s->epoch.c_str());
  if (!source->status().error.empty()) {
    std::fprintf(stderr, "oddsrelay: feed error: %s\n", source->status().error.c_str());
    return 1;
  }
  return 0;
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
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (opt.version) {
    std::printf("oddsrelay %s (commit %s)\n", ODDSRELAY_VERSION, ODDSRELAY_COMMIT);
    return 0;
  }
  return run(opt);
}
