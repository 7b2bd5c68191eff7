// RestInputs: what the REST API is given by the node (tools/oddsrelay/main.cc):
// the engine's snapshots, the keys, the catalog, and callbacks into the other
// components for /v1/status. Filled once before the HTTP listener starts; a
// plain value, so that the node can build it without the REST machinery.
// The REST objects, from the widest to the narrowest: RestInputs (given by
// the node), RestApi (the process: the handler and what every loop shares),
// LoopCaches (one loop's own), Call (one request).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

#include "engine/catalog/catalog.h"
#include "engine/core/published.h"
#include "engine/core/snapshot.h"
#include "engine/history/history_store.h"
#include "protocol/api/api_keys.h"
#include "protocol/api/origins.h"
#include "protocol/api/stream_upgrade.h"
#include "protocol/json_out.h"
#include "protocol/metrics/registry.h"
#include "rest/client_address.h"
#include "rest/stream_addon.h"
#include "rest/vocabulary.h"

namespace oddsrelay::rest {

class HttpServer;

struct RestInputs {
  const SnapshotStore* snapshots = nullptr;
  const history::HistoryStore* history = nullptr;  // --history off: null, /v1/odds/history answers 404
  const Published<KeyStore>* keys = nullptr;
  CatalogPtr catalog;  // the market dictionary; null: /v1/markets answers 404
  const Published<Catalog>* catalog_updates =
      nullptr;  // reloaded catalogs (engine/catalog/catalog_source.h); may be null
  StreamOptions stream;
  int rate_window_s = 60;
  int64_t started_ms = 0;
  // Writes the "feed" object of /v1/status (source, counters, done).
  std::function<void(json::Writer&)> feed_status;
  const HttpServer* server = nullptr;  // for connection counters, may be null
  // Takes upgraded /ws and /pt-ws connections; null: streams answer 404.
  StreamOpener open_stream;
  // Write the "relay" and "webhooks" objects of /v1/status; may be empty.
  std::function<void(json::Writer&)> relay_status, webhook_status;
  std::function<void(json::Writer&)> log_status;  // the data dir's journal and snapshots; unset: null
  // Writes the history's files' members (`files`, `file_bytes`) into
  // /v1/status's "history"; unset without a data dir.
  std::function<void(json::Writer&)> history_files_status;
  // True while a restart reads the history's files back after ready: the
  // history's routes answer 503 meanwhile. Unset: never.
  std::function<bool()> history_loading;
  // /v1/status relay statistics: whether the source is delivering (an edge:
  // connected to the bus and following the log), and the streams connected;
  // may be empty (false, 0).
  std::function<bool()> upstream_ready;
  std::function<uint64_t()> downstream_clients;
  // Set once the journal is replayed and the catalog loaded; until then
  // /healthz answers 503 and every other route 503 too. Null: ready.
  const std::atomic<bool>* ready = nullptr;
  uint32_t http_threads = 1;          // REST loops (HttpServerOptions::threads): one set of answer caches each
  uint32_t handshakes_per_slot = 12;  // stream handshakes per minute per connection slot; 0 = unbounded
  uint32_t http_per_address = 256;    // HTTP connections per client address on keyless routes; 0 = unbounded
  std::function<void(json::Writer&)> bus_status;  // the NATS publisher or follower; unset: null
  const metrics::Registry* metrics = nullptr;     // GET /metrics here (any key); null: 404, --metrics-listen serves it
  // Behind a reverse proxy (docs/deploy.md): whose X-Forwarded-For to
  // believe (--trust-proxy), and the base of the URLs handed out
  // (--public-url; unset: http:// and the request's Host).
  TrustedProxies trusted_proxies;
  PublicUrl public_url;
};

}  // namespace oddsrelay::rest
