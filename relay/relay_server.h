// The relay: N libuv loop threads that own the /ws and /pt-ws connections
// (docs/architecture.md, step 4), and the hub that encodes each engine batch once for
// all of them. on_batch (the engine's sink thread) runs the hub (hub.h) and
// hands the same immutable SharedBatch to every loop; adopt (the REST
// listener) hands an upgraded socket to the least loaded loop. Both through
// lock-free queues and a loop wake. Each loop (relay_loop.h) queues the
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
#include "relay/relay_options.h"
#include "relay/relay_stats.h"

namespace oddsrelay::api {
class KeySlots;
}  // namespace oddsrelay::api

namespace oddsrelay::relay {

class RelayLoop;
class Hub;
using api::KeySlots;  // protocol/api/key_slots.h

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
  void adopt(api::StreamTicket ticket, int fd, std::string pending);

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
