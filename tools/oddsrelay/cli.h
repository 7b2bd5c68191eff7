// The oddsrelay command line: parsed into Options, or a one-line reason why
// not. Kept apart from main() so that tests can check every flag; each flag is
// described once (cli.cc's table), for the parser and --help alike.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/retention.h"
#include "engine/sources/simulator.h"
#include "protocol/api/origins.h"
#include "rest/client_address.h"
#include "tools/oddsrelay/cli_values.h"

namespace oddsrelay {

struct FeedSpec {
  // None: only what --data-dir holds; Bus: an edge following nats://HOST:PORT/STREAM
  enum class Kind { Sim, Replay, None, Bus } kind = Kind::Sim;
  sim::SimOptions sim;
  std::string path;    // replay file, or the bus URL
  double speed = 1.0;  // replay: factor of real time; 0 = max
};

struct Options {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;
  // --metrics-listen: /metrics on a listener of its own, without a key; port
  // 0: served on the main listener as a keyed route (docs/metrics.md).
  std::string metrics_host;
  uint16_t metrics_port = 0;
  FeedSpec feed;
  std::string capture;
  std::string data_dir;
  std::string keys;
  std::string catalog;                    // market catalog file; empty: the one built in
  int64_t catalog_reload_ms = 3'600'000;  // --catalog FILE read again this often; 0: only on SIGHUP
  double progress_s = 5;
  int64_t header_timeout_ms = 10'000;                // a request must be complete this long after its first byte
  int64_t idle_timeout_ms = 60'000;                  // idle keep-alive connections are closed after this
  int64_t http_max_unsent = 4 << 20;                 // an HTTP connection owing more is not read
  int64_t http_max_unsent_total = int64_t{1} << 30;  // all HTTP connections: past it the stalest is closed
  int64_t http_sndbuf = 128 << 10;                   // SO_SNDBUF of HTTP connections; 0 = the kernel's autotuning
  int64_t http_per_address = 256;      // HTTP connections per client address on keyless routes; 0 = unbounded
  int64_t http_threads = 0;            // REST loops; 0 until parsed: then the default, default_http_threads()
  int64_t rate_window_s = 60;          // rate-limit window (docs/api.md: 60 s; shorter only for tests)
  int64_t ws_update_ms = 1000;         // /ws live_update interval
  int64_t ws_ping_ms = 30'000;         // /ws heartbeat interval
  int64_t max_queue_bytes = 8 << 20;   // per-stream send queue bound
  bool ws_compression = true;          // --ws-compression shared (true) or off
  bool relay_uring = false;            // --relay-io uring (true) or writev
  int64_t relay_pace = 0;              // --relay-pace PCT (relay/write_pace.h); 0 = off
  int64_t relay_threads = 0;           // relay loops; 0 = relay::default_relay_threads()
  int64_t slow_timeout_s = 30;         // slow consumers: no write progress, or over the soft bound, this long; 0 = off
  int64_t handshake_rate = 12;         // stream handshakes per minute per connection slot of a key; 0 = unbounded
  int64_t stream_ttl_s = 3600;         // lifetime of signed stream URLs
  int64_t webhook_retries = 8;         // attempts per event_ended / settlement_changed callback
  int64_t webhook_timeout_ms = 3000;   // one webhook POST
  std::string access_log;              // --access-log FILE|-: one JSON line per request and stream (off: empty)
  std::string webhook_ca;              // extra CA certificates (PEM) trusted for https:// webhooks
  int64_t snapshot_every = 50'000;     // compaction: a snapshot after this many records...
  int64_t snapshot_journal_pct = 15;   // ...or a journal this share of the snapshot
  int64_t snapshot_interval_s = 300;   // ...or this long, whichever comes first
  std::string publish;                 // nats://HOST:PORT[,...]/STREAM: publish the log there (ingest node)
  int64_t publish_max_age_s = 86'400;  // the log stream keeps messages this long...
  int64_t publish_max_bytes = int64_t{1} << 30;     // ...and at most this many bytes
  int64_t publish_buffer = int64_t{256} << 20;      // records kept while the bus is away, in bytes
  int64_t publish_snapshot_every = 50'000;          // a snapshot on the bus after this many records...
  int64_t publish_snapshot_interval_s = 60;         // ...or this long with any record
  int64_t publish_replicas = 1;                     // copies of the streams when they are created
  int64_t bus_stale_after_ms = 1000;                // an edge hearing nothing this long checks the stream
  uint64_t resume_window_bytes = 128u << 20;        // /pt-ws and /ws resume: frames kept, at most...
  int64_t resume_window_s = 60;                     // ...and for at most this long
  int64_t retain_ended_ms = kDefaultRetainEndedMs;  // retention horizon in feed time (engine/core/retention.h)
  bool history = true;                              // --history off: no odds history (engine/history/)
  int64_t history_bytes = int64_t{256} << 20;       // the odds history's memory bound
  std::vector<int32_t> stream_sports = {1, 2, 5};   // live events of these sports have a stream
  rest::TrustedProxies trust_proxy;  // proxies whose X-Forwarded-For / PROXY line is believed; empty: none
  api::PublicUrl public_url;         // base of the URLs handed out; unset: http://<Host>
  bool exit_after_replay = false;
  bool help = false;
  bool version = false;
};

// False with `err` set (one line, no trailing newline) on a bad command line.
// Only parses: files are checked by main().
bool parse_cli(int argc, const char* const* argv, Options& out, std::string& err);
// --http-threads when not given: half the cores (the engine, the relay and
// the OS need the rest), at least 1, at most 4.
int64_t default_http_threads(unsigned cores);

// The --help text, written from the table of flags the parser reads.
std::string usage();

}  // namespace oddsrelay
