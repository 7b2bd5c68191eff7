// The ingest node's output to the bus (`--publish nats://HOST:PORT/STREAM`):
// every applied record, in log order, onto the log stream, and the state at
// regular positions onto STREAM_SNAP for edges that join late. A BatchSink:
// the engine only enqueues the batch; this class's thread encodes the
// records as feed-format lines and publishes them asynchronously, so the
// engine never waits on the network.
//
// Exactly-once and single-writer: every message carries Nats-Msg-Id
// <epoch>:<last position> (the server drops a resend it already stored) and
// Nats-Expected-Last-Sequence (the server refuses a message that does not
// follow the stream's last one, so two ingest nodes cannot interleave). The
// first message after a sync goes alone (publish_window.h says why).
// While the bus is down the messages wait in a bounded buffer; when it is
// back the publisher reads where the stream stands and goes on from the
// next position, so no record is lost or stored twice. See
// docs/architecture.md "Scale-out".
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/bus/nats_link.h"
#include "engine/bus/publish_window.h"
#include "engine/core/pipeline.h"
#include "protocol/hand_off_queue.h"

namespace oddsrelay::bus {

struct PublisherOptions {
  StreamSettings streams;
  size_t buffer_bytes = size_t{256} << 20;  // unacknowledged records kept while the bus is away
  uint64_t snapshot_records = 50'000;       // a snapshot on the bus after this many records...
  int snapshot_seconds = 60;                // ...or this long with at least one record
  // A publish not acknowledged by then is retried (after a sync). The acks
  // of what was in flight to a server that died never come: the sync after
  // the failover waits for them to expire, so this bounds that pause.
  int ack_wait_ms = 2000;
  size_t window = 512;  // messages in flight
};

struct PublisherStats {
  std::atomic<uint64_t> acked_seq{0};  // last position the bus has stored
  std::atomic<uint64_t> sent_seq{0};   // last position sent
  std::atomic<uint64_t> received_seq{0};
  std::atomic<uint64_t> messages{0}, records{0};  // acknowledged
  std::atomic<uint64_t> buffered_bytes{0}, buffered_messages{0};
  std::atomic<uint64_t> syncs{0}, errors{0}, gaps{0}, dropped_records{0};
  std::atomic<uint64_t> snapshots{0}, snapshot_failures{0}, last_snapshot_seq{0}, last_snapshot_bytes{0},
      last_snapshot_ms{0};
};

class BusPublisher : public BatchSink {
 public:
  // `start` is the engine's state when publishing begins (after --data-dir
  // recovery): the log continues after start->seq.
  BusPublisher(NatsLink& link, PublisherOptions opts, SnapshotPtr start);
  ~BusPublisher() override;
  BusPublisher(const BusPublisher&) = delete;
  BusPublisher& operator=(const BusPublisher&) = delete;

  bool start(std::string& err);
  void on_batch(const BatchPtr& b) override { queue_.enqueue(b); }
  // After the pipeline has stopped: publishes what is left, waiting at most
  // flush_ms for the bus to store it, then stops.
  void stop(int flush_ms);

  const PublisherStats& stats() const { return stats_; }
  // "connecting", "publishing", "syncing" (re-reading the stream after an
  // error or a reconnect) or "fenced" (another log owns the stream).
  std::string state() const;
  std::string last_error() const;

 private:
  struct Out {
    uint64_t first = 0, last = 0;
    std::string payload;
    SnapshotPtr snap;  // put on the bus once this message is stored
  };
  struct Ack {
    uint64_t last = 0, stream_seq = 0;
    bool ok = false;
    bool refused = false;  // "wrong last sequence": another message holds its slot
    std::string error;
  };
  struct SnapJob {
    SnapshotPtr snap;
    uint64_t stream_seq = 0;
  };

  static void on_ack(jsCtx*, natsMsg* msg, jsPubAck* pa, jsPubAckErr* pae, void* self);
  void run();
  void take(const BatchPtr& b);
  void handle_acks();
  void note_hole(const Ack& a);
  bool sync(std::string& err);
  // Before the buffer goes out again: consecutive messages joined up to
  // kMaxMessageBytes (a snapshot's message ends one), so that what piled up
  // while the bus was away is stored, and read back by edges that read on
  // by sequence, in few messages rather than one per batch.
  void coalesce();
  void send();
  void fence(const std::string& why);
  void note_error(const std::string& why);
  void snapshotter();
  void put_snapshot_now(const SnapshotPtr& s, uint64_t stream_seq);
  void snapshot_when_idle();

  NatsLink& link_;
  PublisherOptions opts_;
  std::string epoch_;
  PublisherStats stats_;
  jsCtx* js_ = nullptr;  // this publisher's context: its ack handler is ours
  HandOffQueue<BatchPtr> queue_;

  // Publisher thread only.
  std::deque<Out> out_;  // not yet acknowledged, in log order; the first sent_ are in flight
  size_t sent_ = 0;
  PublishWindow window_;
  uint64_t pos_ = 0;       // last position received from the engine
  uint64_t expected_ = 0;  // the stream's last sequence, as far as this node knows
  bool need_sync_ = true;
  bool streams_checked_ = false;  // ensure_streams passed once
  bool overflow_ = false;
  SnapshotPtr base_;  // state at out_.front().first - 1 while a sync may need it
  uint64_t since_snapshot_ = 0;
  SnapshotPtr latest_;          // state after the newest batch received
  uint64_t stored_last_ = 0;    // position of the last message the bus stored...
  uint64_t stored_stream_ = 0;  // ...and its stream sequence
  std::chrono::steady_clock::time_point last_snapshot_;
  std::string scratch_;

  mutable std::mutex mu_;  // acks_, state_, error_
  std::vector<Ack> acks_;
  std::string state_ = "connecting", error_;
  std::atomic<bool> fenced_{false};

  std::atomic<bool> stopping_{false};
  std::chrono::steady_clock::time_point flush_deadline_;
  std::thread thread_;

  std::mutex snap_mu_;  // one snapshot on the bus at a time
  std::mutex job_mu_;
  std::condition_variable job_cv_;
  std::deque<SnapJob> jobs_;
  std::atomic<bool> snap_pending_{false};
  bool snap_stop_ = false;
  std::thread snap_thread_;
};

}  // namespace oddsrelay::bus
