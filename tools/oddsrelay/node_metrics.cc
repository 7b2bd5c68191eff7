#include "tools/oddsrelay/node_metrics.h"

#include "engine/bus/bus_source.h"
#include "protocol/metrics/data_path.h"
#include "protocol/metrics/process.h"
#include "rest/request_metrics.h"
#include "tools/oddsrelay/bus_node.h"

namespace oddsrelay {

namespace {

using metrics::TextWriter;
using metrics::Type;

uint64_t behind(uint64_t ahead, uint64_t at) { return ahead > at ? ahead - at : 0; }

void write_state(TextWriter& w, const NodeParts& p) {
  const SnapshotPtr s = p.engine.current();
  const Source& src = *p.source;
  w.single("oddsrelay_log_position", Type::Gauge, "Log position (seq) of the state served.", s->seq);
  w.single("oddsrelay_feed_clock_seconds", Type::Gauge, "Newest `at` applied, Unix seconds (retention's clock).",
           static_cast<double>(s->feed_clock) / 1000.0);
  w.single("oddsrelay_records_applied_total", Type::Counter, "Feed records the engine applied since start.",
           p.engine.applied());
  w.family("oddsrelay_records_skipped_total", Type::Counter,
           "Feed records the engine skipped since start, by reason (unknown_event: remove of an event not held).");
  w.sample("oddsrelay_records_skipped_total", {{"reason", "unknown_event"}}, p.engine.skipped());
  w.single("oddsrelay_feed_malformed_lines_total", Type::Counter,
           "Feed lines the source could not parse and skipped since start.", src.status().malformed.load());
  w.single("oddsrelay_engine_batches_total", Type::Counter, "Batches the engine published since start.",
           p.pipeline->batches());
  // The partition /v1/status "events" shows (docs/api.md): they add up to the events held.
  const uint64_t held = s->events.size(), live = s->listed_live - s->ended_live,
                 prematch = s->listed_prematch - s->ended_prematch;
  w.family("oddsrelay_events", Type::Gauge,
           "Events held, by state (live, prematch: listed without a final; ended: with a final; other).");
  w.sample("oddsrelay_events", {{"state", "live"}}, live);
  w.sample("oddsrelay_events", {{"state", "prematch"}}, prematch);
  w.sample("oddsrelay_events", {{"state", "ended"}}, s->ended);
  w.sample("oddsrelay_events", {{"state", "other"}}, held - live - prematch - s->ended);
  w.single("oddsrelay_events_evicted_total", Type::Counter,
           "Events that left the state at the retention horizon since the log began.", s->evicted);
  w.single("oddsrelay_state_bytes", Type::Gauge, "The engine's estimate of the bytes its state holds.", s->bytes);
}

void write_journal(TextWriter& w, const NodeParts& p) {
  const LogStats& st = p.journal->stats();
  const uint64_t sealed = p.pipeline->sealed_seq();
  w.single("oddsrelay_journal_unwritten_records", Type::Gauge,
           "Records sealed by the engine and not yet written to the journal.",
           behind(sealed, st.written_seq.load(std::memory_order_relaxed)));
  w.single("oddsrelay_journal_unsynced_records", Type::Gauge,
           "Records sealed by the engine and not yet fdatasync'd (written or not).",
           behind(sealed, st.synced_seq.load(std::memory_order_relaxed)));
  metrics::write_families(w, st, log_stats());
}

void write_bus(TextWriter& w, const NodeParts& p) {
  const auto* edge = dynamic_cast<const BusSource*>(p.source.get());
  if (!edge && !p.publisher) return;
  w.single("oddsrelay_bus_connected", Type::Gauge, "1 while connected to NATS.", uint64_t{p.link.connected()});
  if (p.publisher) {
    const bus::PublisherStats& s = p.publisher->stats();
    w.single("oddsrelay_bus_unacked_records", Type::Gauge,
             "Records handed to the publisher that JetStream has not acknowledged yet.",
             behind(p.engine.current()->seq, s.acked_seq.load()));
    metrics::write_families(w, s, publisher_stats());
  }
  if (edge) {
    metrics::write_families(w, edge->stats(), follower_stats());
    w.single("oddsrelay_bus_upstream_ready", Type::Gauge,
             "1 while this edge follows the log (upstream_ready in /v1/status): connected, not rejoining, not "
             "silent while the stream moved on.",
             uint64_t{edge->upstream_ready()});
  }
}

}  // namespace

metrics::StatTable<LogStats> log_stats() {
  using S = LogStats;
  static constexpr metrics::Stat<S> kLogStats[] = {
      {"journal_records", &S::records},
      {"journal_bytes", &S::bytes},
      {"snapshots", &S::snapshots},
      {"snapshot_failures", &S::snapshot_failures},
      {"last_snapshot_seq", &S::last_snapshot_seq},
      {"last_snapshot_bytes", &S::last_snapshot_bytes},
      {"last_snapshot_ms", &S::last_snapshot_ms},
      {"last_snapshot_copied", &S::last_snapshot_copied},
      {"compaction_waits", &S::compaction_waits},
      {"compaction_wait_ms", &S::compaction_wait_ms},
      {"files_deleted", &S::files_deleted},
      {"write_errors",
       &S::write_errors,
       {"oddsrelay_journal_write_errors_total", Type::Counter, "Journal appends that failed."}},
  };
  return kLogStats;
}

void write_log_status(json::Writer& w, const LogWriter* journal, const std::string& dir) {
  if (!journal) {
    w.Null();
    return;
  }
  w.StartObject();
  w.Key("data_dir");
  json::str(w, dir);
  metrics::write_status_fields(w, journal->stats(), log_stats());
  w.EndObject();
}

void register_node_metrics(metrics::Registry& registry, const NodeParts& parts) {
  registry.add([p = parts](TextWriter& w) {
    const bool ready = p.ready.load(std::memory_order_acquire);
    w.single("oddsrelay_ready", Type::Gauge, "1 once the state is recovered and the node serves; 0 while starting.",
             uint64_t{ready});
    w.single("oddsrelay_uptime_seconds", Type::Gauge, "Seconds since the process started (uptime in /v1/status).",
             (wall_ms() - p.started_ms) / 1000);
    metrics::write_process(w, p.started_ms);
    w.single("oddsrelay_http_connections", Type::Gauge, "HTTP connections open on the main listener.",
             p.http.connections());
    metrics::write_families(w, p.http.stats(), rest::http_stats());
    rest::write_request_metrics(w, ready ? p.relay->stats().refused_limit.load() : 0);
    metrics::write_data_path(w);
    if (!ready) return;
    write_state(w, p);
    metrics::write_families(w, p.relay->stats(), relay::relay_stats());
    if (p.journal) write_journal(w, p);
    write_bus(w, p);
  });
}

}  // namespace oddsrelay
