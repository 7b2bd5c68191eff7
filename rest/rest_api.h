// The REST API of SPEC.md on top of the HTTP listener: routing, the
// authentication order (route, method, key, source address, permission,
// rate limit), CORS, gzip, and the /v1 read endpoints. Runs on the REST loop
// thread and reads the engine's current snapshot; it never blocks the engine.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "engine/published.h"
#include "engine/snapshot.h"
#include "protocol/json_out.h"
#include "engine/catalog.h"
#include "rest/api_keys.h"
#include "rest/catalog_views.h"
#include "rest/handshake_limiter.h"
#include "rest/http_server.h"
#include "rest/odds_cache.h"
#include "rest/rate_limiter.h"
#include "rest/settlement_views.h"
#include "rest/stream_addon.h"
#include "rest/stream_upgrade.h"

namespace oddsrelay::rest {

using KeyStorePtr = std::shared_ptr<const KeyStore>;

struct RestContext {
  const SnapshotStore* snapshots = nullptr;
  const Published<KeyStore>* keys = nullptr;
  CatalogPtr catalog;  // the market dictionary; null: /v1/markets answers 404
  const Published<Catalog>* catalog_updates = nullptr;  // reloaded catalogs (engine/catalog_source.h); may be null
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
  // /v1/status relay statistics (SPEC.md): whether the source is delivering
  // (an edge: connected to the bus and following the log), and the streams
  // connected; may be empty (false, 0).
  std::function<bool()> upstream_ready;
  std::function<uint64_t()> downstream_clients;
  // Set once the journal is replayed and the catalog loaded; until then
  // /healthz answers 503 and every other route 503 too. Null: ready.
  const std::atomic<bool>* ready = nullptr;
  uint32_t handshakes_per_slot = 12;  // stream handshakes per minute per connection slot; 0 = unbounded
  std::function<void(json::Writer&)> bus_status;  // the NATS publisher or follower; unset: null
};

class RestApi : public HttpHandler {
 public:
  explicit RestApi(RestContext ctx);
  void handle(const http::Request& req, const Peer& peer, std::string& out, Takeover& takeover) override;
  void refuse(int status, const char* why, std::string& out) override;

  void set_server(const HttpServer* s) { ctx_.server = s; }

  struct Call;  // one request being answered

 private:
  void answer_public(Call& c, std::string_view path);
  void write_status(Call& c);
  bool ready() const { return !ctx_.ready || ctx_.ready->load(std::memory_order_acquire); }
  RestContext ctx_;
  RateLimiter limiter_;
  HandshakeLimiter handshakes_;
  OddsCache odds_cache_;
  std::unique_ptr<CatalogViews> catalog_views_;
  SettlementCache settlements_;
  StreamSigner stream_signer_;
  std::string explorer_key_;  // the explorer page's demo key, new at every start
  ApiKey explorer_api_key_;
};

}  // namespace oddsrelay::rest
