// /pt-ws, the push protocol (docs/api.md, Streams): what one relay loop
// sends its /pt-ws streams. Live fan-out of each batch the hub encoded
// (frames the stream's filter admits, then the INFO that closes the batch),
// conflation for streams whose write is still in flight, the connect
// snapshot and the catch-up of a resumed stream. Frames go to the Outbox;
// no sockets here. Loop thread only.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "relay/conflation.h"
#include "relay/frame_encoder.h"
#include "relay/outbox.h"
#include "relay/stream_module.h"

namespace oddsrelay::relay {

class PtStreams final : public StreamModule {
 public:
  explicit PtStreams(StreamContext& ctx) : ctx_(ctx) {}

  void add(StreamConn* c) override;
  void remove(StreamConn* c) override;
  void start(StreamConn* c, ResumeWindow::Verdict v, size_t first) override;
  // /pt-ws has no client messages (no subscribe step): they are ignored.
  void on_text(StreamConn*, std::string_view) override {}
  // A batch (already in ctx.snap's state) to every stream; conflating
  // buckets hold it until their next flush.
  void fan_out(const LoopBatch& batch);
  // The conflation timer fired: flushes the buckets that are due.
  void on_timer() override;
  size_t size() const { return size_; }
  void restart() override { cache_seq_ = UINT64_MAX; }

 private:
  struct Bucket;
  void send_connect_snapshot(StreamConn* c, ResumeWindow::Verdict refused);
  void build_connect_evt(uint8_t classes);
  const std::vector<LoopBatchFrame>& cut_connect_frames(Bucket& b);
  void send_admitted(Bucket& b, const LoopBatch& batch);
  void send_frames(Bucket& b, const LoopBatch& batch, std::span<const LoopBatchFrame> frames);
  std::optional<uint64_t> open_group(Bucket& b, const LoopBatch& batch, bool has_frames);
  FrameRef group_marker(const LoopBatch& batch, uint64_t from, std::optional<uint64_t> digest);
  void close_group(StreamConn* c, const LoopBatch& batch, uint64_t from, const FrameRef& marker,
                   std::optional<uint64_t> digest);
  void flush_quiet(Bucket& b);
  void flush(Bucket& b);
  void schedule();
  FrameRef ready_info(const StreamFilter& filter, ResumeNote note, SnapshotNote snapshot = {});
  void catch_up(StreamConn* c, size_t first, uint64_t seq);
  void send_batch_frame(StreamConn* c, const LoopBatchFrame& o);
  void send_marker(StreamConn* c, const LoopBatch& batch, uint64_t from, const FrameRef& shared,
                   std::optional<uint64_t> digest = std::nullopt);
  // A verify=1 bucket's view digest at the current state (ctx_.snap), once
  // per bucket and group; none for other buckets.
  std::optional<uint64_t> digest_of(const Bucket& b) const;
  void refresh_connect_cache();

  // Streams by filter (sports, events, markets, classes of events,
  // prices): what a bucket's filter admits, and the frames it cuts, are
  // worked out once per bucket, not once per stream, so a frame a stream's
  // filter drops costs that stream nothing.
  struct Bucket {
    std::vector<int32_t> sports;
    std::vector<uint64_t> events;
    std::vector<uint32_t> markets;
    uint8_t classes = 0;
    bool odds = false;
    uint32_t conflate_ms = 0;
    bool verify = false;  // verify=1: its INFOs carry the view's digest
    std::vector<StreamConn*> conns;
    Conflation pending;       // conflate_ms: the batches since the last flush
    uint64_t next_flush = 0;  // loop ms: the earliest the next flush may be
    // Quiet groups (pt_stream.cc, open_group): the range of the groups that
    // brought the bucket no frame since its last INFO (seq 0: none waits),
    // with the newest one's `at` and stamps; and when that INFO went out.
    struct Quiet {
      uint64_t from = 0, seq = 0;
      int64_t at = 0;
      Stamps stamps;
    } quiet;
    uint64_t last_info_ms = kNever;  // kNever: none yet
    // A cutting filter's connect snapshot frames, as of connect_gen_.
    uint64_t connect_gen = 0;
    std::vector<LoopBatchFrame> connect;
    StreamFilter filter() const { return StreamFilter{sports, classes != 0, odds, classes, events, markets}; }
    // What the bucket holds for its streams (merged changes, a waiting
    // INFO): dropped when its last stream leaves, since fan-out skips an
    // empty bucket and what it held is stale by the time one joins again.
    void forget_held() {
      pending = Conflation();
      next_flush = 0;
      quiet = {};
      last_info_ms = kNever;
    }
    bool same(const StreamFilter& f, uint32_t ms, bool v) const {
      return conflate_ms == ms && verify == v && classes == f.classes && odds == f.odds &&
             std::ranges::equal(sports, f.sports) && std::ranges::equal(events, f.events) &&
             std::ranges::equal(markets, f.markets);
    }
  };
  // How long a group that brings a bucket no frame may wait for the next
  // INFO (docs/api.md, "Filters").
  static constexpr uint64_t kQuietInfoMs = 100;
  static constexpr uint64_t kNever = UINT64_MAX;
  StreamContext& ctx_;
  std::vector<Bucket> buckets_;  // few: one per distinct filter
  size_t size_ = 0;
  std::vector<uint32_t> admitted_;               // fan_out's scratch
  std::vector<LoopBatchFrame> cut_;              // fan_out's scratch: a cutting bucket's frames
  std::vector<const LoopBatchFrame*> snapshot_;  // send_connect_snapshot's scratch
  // Connect snapshots, rebuilt when a stream arrives after the state moved.
  uint64_t cache_seq_ = UINT64_MAX;
  uint64_t connect_gen_ = 0;                    // bumped at each rebuild (cutting buckets cache their own cut)
  std::vector<LoopBatchFrame> connect_evt_[4];  // per event classes, built when a stream of those connects
  uint8_t connect_evt_built_ = 0;               // bit per entry of connect_evt_
  std::vector<LoopBatchFrame> connect_odds_;
  struct FullOdds {
    std::shared_ptr<const EventEntry> version;
    FrameRef frame;
    std::vector<Part> parts;
  };
  std::unordered_map<uint64_t, FullOdds> full_odds_;  // per live event, per entry version
};

}  // namespace oddsrelay::relay
