// The edge's source: follows the log stream on NATS JetStream from where the
// join left it (engine/bus/bus_join.h) and pushes every record into the pipeline,
// so the edge's engine applies exactly the ingest's records in the ingest's
// order: the same positions, epoch and state digest. When the log moved on
// without this edge (a gap: retention dropped messages it had not read, or
// the ingest bridged a hole with a snapshot; or another epoch took the
// stream), it rejoins by itself: the newest snapshot is loaded into a fresh
// engine and replaces the state in one step (Pipeline::replace_state), and
// following goes on after it. A message that breaks the contract (no valid
// Nats-Msg-Id, a line that is not a record) stops the following with the
// reason in /v1/status: the edge keeps serving the last state it had.
//
// Silence is watched too: when nothing came from the bus for stale_after
// while the stream moved on (or the bus does not answer), upstream_ready
// turns false until the edge has caught up, and the consumer is recreated
// from the last message applied, on whichever server the link is on now: a
// consumer lost with its server costs neither a gap nor a duplicate.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "engine/bus/bus_join.h"
#include "engine/bus/log_reader.h"
#include "engine/bus/nats_link.h"
#include "engine/bus/sequence_reader.h"
#include "engine/sources/sources.h"
#include "protocol/feed_reader.h"

namespace oddsrelay {

struct BusSourceStats {
  std::atomic<uint64_t> messages{0};
  std::atomic<uint64_t> stream_seq{0};  // of the last message applied
  std::atomic<uint64_t> seq{0};         // position of the last record pushed
  std::atomic<uint64_t> pending{0};     // messages the server holds beyond it
  std::atomic<uint64_t> resubscribes{0};
  std::atomic<uint64_t> old_messages{0};      // delivered again after a consumer was recreated: skipped
  std::atomic<uint64_t> read_on{0};           // times it read on by sequence while no consumer could be placed
  std::atomic<uint64_t> read_on_messages{0};  // messages it applied so
  std::atomic<uint64_t> rejoins{0};           // times the state was replaced by a newer snapshot after a hole
  std::atomic<bool> rejoining{false};         // between meeting a hole and holding the newer snapshot
  std::atomic<bool> stopped{false};           // stopped following (error says why)
  std::atomic<bool> behind{false};            // silent for stale_after while the stream moved on
  std::atomic<uint64_t> stalls{0};            // times it fell behind so
};

class BusSource : public Source {
 public:
  BusSource(bus::NatsLink& link, const bus::JoinResult& joined, Pipeline& pipeline, int64_t stale_after_ms = 1000)
      : link_(link),
        pipeline_(pipeline),
        stale_after_(std::chrono::milliseconds(stale_after_ms)),
        joined_(joined),
        epoch_(joined.epoch) {
    stats_.seq = joined.seq;
    stats_.stream_seq = joined.next_stream_seq - 1;
  }
  ~BusSource() override { stop(); }
  void start() override;
  void stop() override;
  std::string describe() const override;

  // Connected to the bus and following the log: false while the bus is down,
  // while rejoining, after the following stopped, and while behind after a
  // silence (see above).
  bool upstream_ready() const {
    return link_.connected() && !stats_.stopped.load() && !stats_.rejoining.load() && !stats_.behind.load();
  }
  const BusSourceStats& stats() const { return stats_; }
  // The last join: at start, or the newest rejoin.
  bus::JoinResult joined() const {
    std::lock_guard lock(mu_);
    return joined_;
  }
  // Why following stopped, or why the edge is rejoining / last rejoined.
  std::string error() const {
    std::lock_guard lock(mu_);
    return error_;
  }

 private:
  void run();
  void fail(const std::string& why);
  void note(const std::string& why);
  // After a hole at `why`: joins again from the newest snapshot that is past
  // this edge's position (or of another log) and replaces the state with it.
  // False only when stopping.
  bool rejoin(const std::string& why);
  using Clock = std::chrono::steady_clock;
  // After stale_after without a message: where does the stream stand? Marks
  // the edge behind, and drops the reader (reopened from the last message
  // applied) when the stream moved on without it.
  void check_silence(bus::LogReader& reader, bool& open);
  void heard(uint64_t pending);
  void caught_up();  // upstream_ready again, if it was behind
  enum class Step { Next, Rejoin, Stop };
  // Applies one message of the log, or says why it cannot (rejoin_why_).
  Step take(const bus::LogMessage& m, feed::FeedParser& parser);
  // While no consumer can be placed (the cluster elects the leader that
  // places them): reads on by stream sequence until `until`, a batch of
  // direct gets a round trip (any replica answers), or from the stream's
  // leader one at a time when no replica answers them (a stream made
  // without AllowDirect: direct gets are tried again every 30 s);
  // `progressed` when it applied anything.
  Step read_on(feed::FeedParser& parser, Clock::time_point until, bool& progressed);
  static constexpr size_t kReadOnBatch = 32;

  bus::NatsLink& link_;
  Pipeline& pipeline_;
  const Clock::duration stale_after_;
  Clock::time_point last_heard_ = Clock::now();  // source thread
  Clock::time_point next_check_{};               // source thread
  Clock::time_point next_open_{};                // source thread: when to try placing a consumer again
  std::string rejoin_why_;                       // source thread: the hole take() met
  bus::SequenceReader sequence_reader_;          // source thread
  Clock::time_point direct_after_{};             // source thread: when to try direct gets again
  bool said_one_at_a_time_ = false;              // source thread: the fallback was logged
  BusSourceStats stats_;
  mutable std::mutex mu_;  // joined_, error_
  bus::JoinResult joined_;
  std::string epoch_;  // of the log being followed (source thread)
  std::string error_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace oddsrelay
