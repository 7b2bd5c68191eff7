// Webhooks (docs/api.md "Webhooks"): engine
// batches become JSON callbacks POSTed to each key's endpoint, signed with
// X-Signature = HMAC-SHA256(body, secret). The engine thread only enqueues
// the batch; a dispatcher thread turns it into notifications; each
// endpoint has its own thread, queue and retry clock, so a receiver that is
// down or slow delays nobody else. odds_update is coalesced per event
// while it waits (the newest replaces the queued one); event_ended and
// settlement_changed are retried with exponential backoff up to a limit,
// then counted as dropped. Bounds: per endpoint at most `max_queue` queued
// callbacks (non-critical ones give way first, then the oldest critical)
// and `max_queue` coalesced odds_update (the oldest event's goes first);
// endpoints of keys gone from a reloaded keys file are shut down.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/core/pipeline.h"
#include "engine/core/published.h"
#include "protocol/api/api_keys.h"
#include "protocol/hand_off_queue.h"
#include "protocol/json_out.h"
#include "protocol/metrics/stat_table.h"
#include "relay/webhooks/tls_client.h"

namespace oddsrelay::relay {

struct WebhookOptions {
  int max_attempts = 8;        // per critical callback (event_ended, settlement_changed)
  int max_attempts_other = 3;  // odds_update, score_update
  int timeout_ms = 3000;       // one POST, connect to answer
  int backoff_first_ms = 250;  // doubled per failed attempt
  int backoff_max_ms = 30'000;
  size_t max_queue = 10'000;  // queued callbacks per endpoint, and coalesced odds events per endpoint
  std::string ca_file;        // extra trusted CA certificates for https:// endpoints
};

struct WebhookStats {
  std::atomic<uint64_t> delivered{0}, failed_attempts{0}, dropped{0}, coalesced{0}, endpoints{0};
};

// WebhookStats described once: the /v1/status "webhooks" fields, in order
// (none is a /metrics series).
metrics::StatTable<WebhookStats> webhook_stats();

class Webhooks : public BatchSink {
 public:
  // Throws std::runtime_error when opts.ca_file cannot be loaded.
  Webhooks(WebhookOptions opts, const Published<api::KeyStore>& keys);
  ~Webhooks() override;
  void start();
  void stop();  // delivers nothing more; joins every thread

  void on_batch(const BatchPtr& batch) override;  // delivery thread: waits only past kMaxSinkBacklog
  void write_status(json::Writer& w) const;
  const WebhookStats& stats() const { return stats_; }
  // Batches handed to the dispatcher (none while no key has a webhook).
  uint64_t batches_taken() const { return taken_.load(std::memory_order_relaxed); }

  struct Note {
    uint64_t event = 0;
    bool critical = false;
    bool odds = false;  // coalesced per event
    std::string kind;   // odds_update, ...
    std::string data;   // the JSON "data" object
    int64_t at = 0;     // feed time of the change
  };
  class Endpoint;

 private:
  void dispatch();
  bool wanted();  // on_batch's thread: is there a key or endpoint for a batch
  Endpoint& endpoint_for(const api::ApiKey& key, std::set<std::string>* live);
  void retire_unused(const std::set<std::string>& live);

  WebhookOptions opts_;
  // For https:// endpoints, shared by their threads; made by the dispatcher
  // at the first one (tls_context()), which alone touches these two.
  SSL_CTX* tls_context();
  std::unique_ptr<TlsClientContext> tls_;
  std::string tls_error_;  // why tls_ could not be made
  const Published<api::KeyStore>& keys_;
  WebhookStats stats_;
  HandOffQueue<BatchPtr> batches_;
  Backlog backlog_;  // what batches_ holds
  std::atomic<uint64_t> taken_{0};
  std::shared_ptr<const api::KeyStore> hook_keys_;  // on_batch's thread: the keys any_hook_ was read from
  bool any_hook_ = false;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> running_{false};  // the dispatcher takes batches
  std::thread dispatcher_;
  static std::string endpoint_id(const api::ApiKey& key);

  std::map<std::string, std::unique_ptr<Endpoint>> endpoints_;  // by url + secret + sandbox; dispatcher only
  std::vector<std::unique_ptr<Endpoint>> retired_;              // dropped by a reload, thread still ending
};

}  // namespace oddsrelay::relay
