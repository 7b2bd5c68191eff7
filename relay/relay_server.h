// The relay: N libuv loop threads that own the /ws and /pt-ws connections
// (docs/architecture.md, step 4), and the hub that encodes each engine batch once for
// all of them. on_batch (the engine's sink thread) runs the hub (hub.h) and
// hands the same immutable SharedBatch to every loop; adopt (the REST
// listener) hands an upgraded socket to the least loaded loop. Both through
// lock-free queues and uv_async_send. Each loop (relay_loop.h) queues the
// batch's frames to its subscribers and gives each connection one write per
// loop turn.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/core/pipeline.h"
#include "engine/core/snapshot.h"
#include "protocol/api/stream_upgrade.h"
#include "protocol/json_out.h"
#include "protocol/metrics/stat_table.h"

namespace oddsrelay::rest {
class KeySlots;
}  // namespace oddsrelay::rest

namespace oddsrelay::relay {

struct RelayOptions {
  size_t max_queue_bytes = 8 << 20;  // per connection; past it: close 1008
  int live_update_ms = 1000;         // /ws live_update at most this often
  int ping_interval_ms = 30'000;     // server ping (/ws and /pt-ws); no pong for 2 intervals: terminated
  // A stream whose writes have not progressed for this long, or that has
  // held more than a quarter of max_queue_bytes for this long, is closed
  // 1008 (a slow consumer: Redis's soft output-buffer limit, NATS's slow
  // consumer). 0: never.
  int slow_timeout_ms = 30'000;
  size_t max_message = 64 * 1024;           // largest client message (close 1009 past it)
  int close_grace_ms = 2'000;               // after our close frame, wait this long for the client's
  size_t resume_window_bytes = 128u << 20;  // encoded batches kept for `resume=EPOCH:SEQ`, at most...
  int resume_window_ms = 60'000;            // ...and for at most this long
  unsigned threads = 1;                     // relay loops (--relay-threads)
  // --ws-compression shared: permessage-deflate answered when offered,
  // each frame compressed once per loop and shared (docs/architecture.md);
  // off: never negotiated.
  bool ws_compression = true;
};

// --relay-threads' default: half the cores (the engine, the journal and
// REST need the rest), at least 1, at most 16.
unsigned default_relay_threads();

// Counters for /v1/status and the tests; any thread.
struct RelayStats {
  std::atomic<uint64_t> pt_connections{0}, ws_connections{0};
  std::atomic<uint64_t> accepted{0}, refused_limit{0};
  std::atomic<uint64_t> batches{0}, frames_encoded{0}, deliveries{0}, bytes_written{0};
  // permessage-deflate: streams that negotiated it (ever), frames compressed
  // (once per loop per frame, not per stream).
  std::atomic<uint64_t> deflate_negotiated{0}, frames_deflated{0};
  std::atomic<uint64_t> conflated{0}, closed_slow{0}, closed_heartbeat{0}, closed_protocol{0};
  std::atomic<uint64_t> closed_stalled{0}, closed_soft_limit{0};  // slow consumers, by reason
  std::atomic<uint64_t> closed_restart{0};  // closed because the state was replaced (an edge rejoining its log)
  std::atomic<uint64_t> resumed{0}, resume_refused{0};
  // The resume window: groups and bytes held, and the oldest seq a client
  // may resume from.
  std::atomic<uint64_t> window_groups{0}, window_bytes{0}, window_oldest{0};
};

// RelayStats described once: the /v1/status "relay" fields, in order, and
// the /metrics families those that are exposed belong to; `resume_window`
// is the nested "resume_window" object.
metrics::StatTable<RelayStats> relay_stats();
metrics::StatTable<RelayStats> resume_window_stats();

class RelayLoop;
class Hub;
using rest::KeySlots;  // protocol/api/key_slots.h

class RelayServer : public BatchSink {
 public:
  RelayServer(RelayOptions opts, const SnapshotStore& store);
  ~RelayServer() override;
  RelayServer(const RelayServer&) = delete;
  RelayServer& operator=(const RelayServer&) = delete;

  void start();  // runs the loop on its own thread
  void stop();   // any thread: closes every stream (1001) and joins

  // Engine thread. Waits only while the loop is kMaxSinkBacklog batches
  // behind (pipeline.h): a relay starved of CPU slows the feed rather than
  // holding every batch it has not fanned out yet.
  void on_batch(const BatchPtr& batch) override;
  // Any thread (the REST loop): an upgraded connection to take over.
  void adopt(rest::StreamTicket ticket, int fd, std::string pending);

  const RelayStats& stats() const { return stats_; }
  // Streams connected now (/ws and /pt-ws): /v1/status downstream_clients.
  uint64_t clients() const {
    return stats_.pt_connections.load(std::memory_order_relaxed) +
           stats_.ws_connections.load(std::memory_order_relaxed);
  }
  void write_status(json::Writer& w) const;

 private:
  RelayOptions opts_;
  const SnapshotStore& store_;
  RelayStats stats_;
  std::unique_ptr<KeySlots> slots_;
  std::unique_ptr<Hub> hub_;  // from start()
  std::vector<std::unique_ptr<RelayLoop>> loops_;
  std::atomic<bool> running_{false};  // the loops take batches: waiting for them ends
  std::atomic<uint64_t> hub_seq_{0};  // the newest seq handed to the loops
  std::vector<std::thread> threads_;
};

}  // namespace oddsrelay::relay
