// The edge's source: follows the log stream on NATS JetStream from where the
// join left it (bus/bus_join.h) and pushes every record into the pipeline,
// so the edge's engine applies exactly the ingest's records in the ingest's
// order: the same positions, epoch and state digest. A message that does not
// continue the log where this edge stands (a gap, another epoch, a line that
// is not a record) stops the following with the reason in /v1/status: the
// edge keeps serving the last state it had, and a restart rejoins.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "engine/bus/bus_join.h"
#include "engine/bus/nats_link.h"
#include "tools/sources/sources.h"

namespace oddsrelay {

struct BusSourceStats {
  std::atomic<uint64_t> messages{0};
  std::atomic<uint64_t> stream_seq{0};  // of the last message applied
  std::atomic<uint64_t> seq{0};         // position of the last record pushed
  std::atomic<uint64_t> pending{0};     // messages the server holds beyond it
  std::atomic<uint64_t> resubscribes{0};
  std::atomic<bool> stopped{false};     // stopped following (error says why)
};

class BusSource : public Source {
 public:
  BusSource(bus::NatsLink& link, const bus::JoinResult& joined, Pipeline& pipeline)
      : link_(link), joined_(joined), pipeline_(pipeline) {
    stats_.seq = joined.seq;
    stats_.stream_seq = joined.next_stream_seq - 1;
  }
  ~BusSource() override { stop(); }
  void start() override;
  void stop() override;
  std::string describe() const override;

  // Connected to the bus and following the log: false while the bus is down
  // and after the following stopped.
  bool upstream_ready() const { return link_.connected() && !stats_.stopped.load(); }
  const BusSourceStats& stats() const { return stats_; }
  const bus::JoinResult& joined() const { return joined_; }
  std::string error() const {
    std::lock_guard lock(mu_);
    return error_;
  }

 private:
  void run();
  void fail(const std::string& why);

  bus::NatsLink& link_;
  bus::JoinResult joined_;
  Pipeline& pipeline_;
  BusSourceStats stats_;
  mutable std::mutex mu_;
  std::string error_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace oddsrelay
