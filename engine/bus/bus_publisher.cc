#include "engine/bus/bus_publisher.h"

#include <cstdio>

#include "engine/bus/snapshot_transfer.h"
#include "protocol/feed_writer.h"
#include "protocol/named_thread.h"

namespace oddsrelay::bus {

using Clock = std::chrono::steady_clock;

// How long a sync waits for the stream's state. While the stream has no
// leader (an election: 4-9 s) nobody answers; a shorter wait, retried,
// puts the log back on the bus sooner after the election.
constexpr int kSyncWaitMs = 500;

BusPublisher::BusPublisher(NatsLink& link, PublisherOptions opts, SnapshotPtr start)
    : link_(link), opts_(opts), epoch_(start->epoch), window_(opts.window), pos_(start->seq), base_(std::move(start)) {
  stats_.received_seq = pos_;
}

BusPublisher::~BusPublisher() {
  stop(0);
  if (js_) jsCtx_Destroy(js_);
}

bool BusPublisher::start(std::string& err) {
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = 5000;
  jo.PublishAsync.AckHandler = on_ack;
  jo.PublishAsync.AckHandlerClosure = this;
  jo.PublishAsync.MaxPending = static_cast<int64_t>(opts_.window) * 2;  // our window binds first
  natsStatus s = natsConnection_JetStream(&js_, link_.nc(), &jo);
  if (s != NATS_OK) return err = nats_error("JetStream context", s), false;
  last_snapshot_ = Clock::now();
  thread_ = named_thread("bus-publish", [this] { run(); });
  snap_thread_ = named_thread("bus-snapshot", [this] { snapshotter(); });
  return true;
}

void BusPublisher::stop(int flush_ms) {
  if (thread_.joinable()) {
    flush_deadline_ = Clock::now() + std::chrono::milliseconds(flush_ms);
    stopping_.store(true, std::memory_order_release);
    thread_.join();
  }
  if (snap_thread_.joinable()) {
    {
      std::lock_guard lock(job_mu_);
      snap_stop_ = true;
    }
    job_cv_.notify_one();
    snap_thread_.join();
  }
  // Acks still on their way must not reach a publisher that is gone.
  if (js_) {
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MaxWait = 1000;
    js_PublishAsyncComplete(js_, &po);
  }
}

std::string BusPublisher::state() const {
  std::lock_guard lock(mu_);
  return state_;
}

std::string BusPublisher::last_error() const {
  std::lock_guard lock(mu_);
  return error_;
}

void BusPublisher::note_error(const std::string& why) {
  stats_.errors.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(mu_);
  if (why != error_) std::fprintf(stderr, "oddsrelay: bus: %s\n", why.c_str());
  error_ = why;
}

void BusPublisher::fence(const std::string& why) {
  fenced_ = true;
  {
    std::lock_guard lock(mu_);
    state_ = "fenced";
    error_ = why;
  }
  std::fprintf(stderr, "oddsrelay: bus: not publishing: %s\n", why.c_str());
}

// nats.c's delivery thread: only records the outcome.
void BusPublisher::on_ack(jsCtx*, natsMsg* msg, jsPubAck* pa, jsPubAckErr* pae, void* self) {
  auto* p = static_cast<BusPublisher*>(self);
  Ack a;
  const char* id = nullptr;
  std::string epoch;
  if (natsMsgHeader_Get(msg, kMsgIdHeader, &id) == NATS_OK && id) parse_msg_id(id, epoch, a.last);
  if (pa) {
    a.ok = true;
    a.stream_seq = pa->Sequence;
  } else if (pae) {
    a.error = pae->ErrText ? pae->ErrText : natsStatus_GetText(pae->Err);
    if (pae->ErrCode) a.error += " (JetStream error " + std::to_string(static_cast<int>(pae->ErrCode)) + ")";
    a.refused = pae->ErrCode == JSStreamWrongLastSequenceErr;
  }
  natsMsg_Destroy(msg);
  std::lock_guard lock(p->mu_);
  p->acks_.push_back(std::move(a));
}

void BusPublisher::run() {
  BatchPtr buf[64];
  auto next_sync = Clock::now();
  for (;;) {
    size_t n = queue_.wait_dequeue_bulk_timed(buf, 64, 5'000);
    for (size_t i = 0; i < n; ++i) {
      take(buf[i]);
      buf[i].reset();
    }
    handle_acks();
    if (stopping_.load(std::memory_order_acquire) && n == 0) {
      if (out_.empty() || fenced_ || Clock::now() >= flush_deadline_) break;
    }
    if (fenced_) {
      stats_.dropped_records.fetch_add(out_.empty() ? 0 : out_.back().last - out_.front().first + 1);
      out_.clear();
      sent_ = 0;
      stats_.buffered_bytes = 0;
      stats_.buffered_messages = 0;
      continue;
    }
    if (need_sync_) {
      if (window_.inflight() == 0 && link_.connected() && Clock::now() >= next_sync) {
        std::string err;
        if (!sync(err)) {
          if (!fenced_) note_error(err);
          // Soon again: while the stream elects a leader each try waits
          // kSyncWaitMs for an answer, and the first after the election
          // puts the log back on the bus.
          next_sync = Clock::now() + std::chrono::milliseconds(100);
        }
      }
      continue;
    }
    if (!link_.connected()) {
      need_sync_ = true;  // where the stream stands is read again after a reconnect
      std::lock_guard lock(mu_);
      state_ = "syncing";
      continue;
    }
    send();
    snapshot_when_idle();
  }
  if (!out_.empty() && !fenced_)
    std::fprintf(stderr, "oddsrelay: bus: stopped with positions %llu..%llu not stored on the bus\n",
                 static_cast<unsigned long long>(out_.front().first),
                 static_cast<unsigned long long>(out_.back().last));
}

void BusPublisher::take(const BatchPtr& b) {
  const uint64_t last = b->snapshot->seq;
  if (last <= pos_) return;
  stats_.received_seq.store(last, std::memory_order_relaxed);
  latest_ = b->snapshot;
  if (overflow_ || fenced_) {
    // Past the buffer: the records are not kept; the state they make is
    // (a snapshot at the newest position is put on the bus when it is back).
    stats_.dropped_records.fetch_add(b->records.size(), std::memory_order_relaxed);
    base_ = b->snapshot;
    pos_ = last;
    return;
  }
  // Positions b->first_seq .. last, one line each, cut into messages.
  uint64_t p = b->first_seq;
  Out cur;
  cur.first = p;
  size_t added = 0;
  auto close_msg = [&](uint64_t last_pos) {
    cur.last = last_pos;
    stats_.buffered_bytes.fetch_add(cur.payload.size(), std::memory_order_relaxed);
    out_.push_back(std::move(cur));
    cur = Out{};
    ++added;
  };
  for (const feed::Record& r : b->records) {
    scratch_.clear();
    feed::write_record(r, scratch_);
    scratch_ += '\n';
    if (!cur.payload.empty() && cur.payload.size() + scratch_.size() > kMaxMessageBytes) {
      close_msg(p - 1);
      cur.first = p;
    }
    cur.payload += scratch_;
    ++p;
  }
  close_msg(last);
  stats_.buffered_messages.fetch_add(added, std::memory_order_relaxed);
  pos_ = last;
  since_snapshot_ += b->records.size();
  const auto now = Clock::now();
  if (!snap_pending_ && (since_snapshot_ >= opts_.snapshot_records ||
                         now - last_snapshot_ >= std::chrono::seconds(opts_.snapshot_seconds))) {
    out_.back().snap = b->snapshot;
    snap_pending_ = true;
    since_snapshot_ = 0;
    last_snapshot_ = now;
  }
  if (stats_.buffered_bytes.load(std::memory_order_relaxed) > opts_.buffer_bytes) {
    // The bus has been away too long: keep what is in flight, drop the rest.
    uint64_t dropped = 0;
    while (out_.size() > sent_) {
      if (out_.back().snap) snap_pending_ = false;
      dropped += out_.back().last - out_.back().first + 1;
      stats_.buffered_bytes.fetch_sub(out_.back().payload.size(), std::memory_order_relaxed);
      stats_.buffered_messages.fetch_sub(1, std::memory_order_relaxed);
      out_.pop_back();
    }
    stats_.dropped_records.fetch_add(dropped, std::memory_order_relaxed);
    overflow_ = true;
    need_sync_ = true;
    base_ = b->snapshot;
    note_error("buffer full (" + std::to_string(opts_.buffer_bytes) + " bytes) while the bus is away: records after " +
               std::to_string(out_.empty() ? pos_ - dropped : out_.back().last) +
               " are not kept; their state is published as a snapshot when the bus is back");
  }
}

void BusPublisher::handle_acks() {
  std::vector<Ack> acks;
  {
    std::lock_guard lock(mu_);
    acks.swap(acks_);
  }
  for (Ack& a : acks) {
    if (window_.acked(a.ok, a.refused)) note_hole(a);
    if (!a.ok) {
      if (!need_sync_) note_error("publish failed: " + a.error + "; re-reading the stream");
      need_sync_ = true;
      continue;
    }
    while (!out_.empty() && sent_ > 0 && out_.front().last <= a.last) {
      Out& o = out_.front();
      if (o.last == a.last) {
        stored_last_ = a.last;
        stored_stream_ = a.stream_seq;
      }
      if (o.snap) {
        if (o.last == a.last) {
          std::lock_guard lock(job_mu_);
          jobs_.push_back(SnapJob{std::move(o.snap), a.stream_seq});
          job_cv_.notify_one();
        } else {
          snap_pending_ = false;
        }
      }
      stats_.messages.fetch_add(1, std::memory_order_relaxed);
      stats_.records.fetch_add(o.last - o.first + 1, std::memory_order_relaxed);
      stats_.buffered_bytes.fetch_sub(o.payload.size(), std::memory_order_relaxed);
      stats_.buffered_messages.fetch_sub(1, std::memory_order_relaxed);
      out_.pop_front();
      --sent_;
    }
    if (a.last > stats_.acked_seq.load(std::memory_order_relaxed)) stats_.acked_seq.store(a.last);
  }
}

// A message was stored after one of the same round was refused (see
// publish_window.h): the stream skips the refused one's records. Edges
// rejoin over the hole from a snapshot, so the next batch carries one
// rather than the edges waiting out the snapshot interval.
void BusPublisher::note_hole(const Ack& a) {
  stats_.gaps.fetch_add(1, std::memory_order_relaxed);
  since_snapshot_ = opts_.snapshot_records;
  note_error("stream seq " + std::to_string(a.stream_seq) + " (log seq " + std::to_string(a.last) +
             ") was stored after a message of the same round was refused: the stream has a hole before it; a "
             "snapshot follows");
}

void BusPublisher::send() {
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = opts_.ack_wait_ms;
  while (sent_ < out_.size() && window_.may_send()) {
    const Out& o = out_[sent_];
    natsMsg* m = nullptr;
    natsStatus s = natsMsg_Create(&m, log_subject(link_.url().stream).c_str(), nullptr, o.payload.data(),
                                  static_cast<int>(o.payload.size()));
    if (s == NATS_OK) s = natsMsgHeader_Set(m, kMsgIdHeader, msg_id(epoch_, o.last).c_str());
    if (s == NATS_OK) s = natsMsgHeader_Set(m, kExpectedLastSeqHeader, std::to_string(expected_).c_str());
    if (s == NATS_OK) s = js_PublishMsgAsync(js_, &m, &po);
    if (s != NATS_OK) {
      natsMsg_Destroy(m);  // null when the library took it
      note_error(nats_error("publish", s));
      need_sync_ = true;
      return;
    }
    ++expected_;
    ++sent_;
    window_.sent();
    stats_.sent_seq.store(o.last, std::memory_order_relaxed);
  }
}

// Reads where the stream stands and lines the buffer up behind it. Runs
// with nothing in flight.
bool BusPublisher::sync(std::string& err) {
  {
    std::lock_guard lock(mu_);
    state_ = "syncing";
  }
  sent_ = 0;
  // The streams are checked (and made) once: a sync after a failover then
  // waits for nothing but the log stream's own leader.
  if (!streams_checked_ && !link_.ensure_streams(opts_.streams, err)) return false;
  streams_checked_ = true;
  StreamState st;
  const Got g = link_.stream_state(link_.url().stream, st, err, kSyncWaitMs);
  if (g == Got::Missing) streams_checked_ = false;  // deleted meanwhile: made again at the next sync
  if (g != Got::Ok) return err.empty() ? (err = "stream vanished", false) : false;
  if (overflow_) {
    // Records were dropped after what is buffered: the buffer does not lead
    // up to this node's position any more. What the bus lacks is bridged
    // by the state at pos_ (base_) instead.
    for (const Out& o : out_) {
      if (o.snap) snap_pending_ = false;
      stats_.dropped_records.fetch_add(o.last - o.first + 1, std::memory_order_relaxed);
    }
    out_.clear();
    stats_.buffered_bytes = 0;
    stats_.buffered_messages = 0;
  }
  const uint64_t first = out_.empty() ? pos_ + 1 : out_.front().first;  // first position this node holds
  const uint64_t m = st.last_seq;
  bool fresh = m == 0;
  std::string bus_epoch;
  uint64_t bus_last = 0;
  if (!fresh) {
    StoredMsg last;
    Got g = link_.get_msg(link_.url().stream, m, last, err);
    if (g == Got::Failed) return false;
    if (g == Got::Ok) {
      if (!parse_msg_id(last.msg_id, bus_epoch, bus_last)) {
        fence("stream " + link_.url().stream + " holds messages that are not an oddsrelay log (no Nats-Msg-Id)");
        return false;
      }
    } else {
      // The last message expired: the newest snapshot may name its position.
      SnapshotHead h;
      if (read_head(link_, h, err) == Got::Ok && h.stream_seq == m) {
        bus_epoch = h.epoch;
        bus_last = h.seq;
      } else {
        return err = "cannot tell where the log stream stands (its last message expired)", false;
      }
    }
    if (bus_epoch != epoch_) {
      fence("stream " + link_.url().stream + " carries log " + bus_epoch + " (seq " + std::to_string(bus_last) +
            "); this node's log is " + epoch_ + ": use another stream, or delete that one");
      return false;
    }
    if (bus_last > pos_) {
      fence("stream " + link_.url().stream + " holds seq " + std::to_string(bus_last) + " of log " + epoch_ +
            " but this node is at seq " + std::to_string(pos_) + " (another node publishes this log?)");
      return false;
    }
  }
  expected_ = m;
  stored_stream_ = m;
  stored_last_ = fresh ? first - 1 : bus_last;
  if (fresh || bus_last < first - 1) {
    // The stream does not reach this node's first position: the state there
    // goes on the bus first, so an edge can join after the hole.
    if (!fresh) {
      stats_.gaps.fetch_add(1, std::memory_order_relaxed);
      std::fprintf(stderr,
                   "oddsrelay: bus: the stream ends at seq %llu, this node's log continues at %llu: publishing the "
                   "state at %llu; edges that were following rejoin from it\n",
                   static_cast<unsigned long long>(bus_last), static_cast<unsigned long long>(first),
                   static_cast<unsigned long long>(first - 1));
    }
    if (base_ && base_->seq == first - 1) {
      put_snapshot_now(base_, m);
    } else {
      // Nothing to put there: the next batch carries a snapshot.
      since_snapshot_ = opts_.snapshot_records;
    }
  } else {
    // Drop what the stream already holds (sent before a disconnect or by the
    // previous run of this node) and go on after it.
    while (!out_.empty() && out_.front().last <= bus_last) {
      if (out_.front().snap) snap_pending_ = false;
      stats_.buffered_bytes.fetch_sub(out_.front().payload.size(), std::memory_order_relaxed);
      stats_.buffered_messages.fetch_sub(1, std::memory_order_relaxed);
      out_.pop_front();
    }
    if (!out_.empty() && out_.front().first <= bus_last) {
      Out& o = out_.front();
      uint64_t skip = bus_last - o.first + 1;
      size_t cut = 0;
      for (; skip > 0; --skip) cut = o.payload.find('\n', cut) + 1;
      stats_.buffered_bytes.fetch_sub(cut, std::memory_order_relaxed);
      o.payload.erase(0, cut);
      o.first = bus_last + 1;
    }
    if (bus_last > stats_.acked_seq.load()) stats_.acked_seq.store(bus_last);
    // A first snapshot for joiners when the bus has none of this log at
    // this position yet.
    if (base_ && base_->seq == bus_last) {
      SnapshotHead h;
      std::string ignored;
      if (read_head(link_, h, ignored) != Got::Ok || h.epoch != epoch_ || h.seq < bus_last) put_snapshot_now(base_, m);
    }
  }
  coalesce();
  base_.reset();
  overflow_ = false;
  need_sync_ = false;
  window_.after_sync();
  stats_.syncs.fetch_add(1, std::memory_order_relaxed);
  std::fprintf(stderr, "oddsrelay: bus: publishing log %s to %s from seq %llu (stream seq %llu)\n", epoch_.c_str(),
               link_.url().str().c_str(), static_cast<unsigned long long>(out_.empty() ? pos_ + 1 : out_.front().first),
               static_cast<unsigned long long>(m + 1));
  std::lock_guard lock(mu_);
  state_ = "publishing";
  error_.clear();
  return true;
}

void BusPublisher::coalesce() {
  std::deque<Out> joined;
  for (Out& o : out_) {
    Out* prev = joined.empty() ? nullptr : &joined.back();
    if (prev && !prev->snap && prev->last + 1 == o.first &&
        prev->payload.size() + o.payload.size() <= kMaxMessageBytes) {
      prev->payload += o.payload;
      prev->last = o.last;
      prev->snap = std::move(o.snap);
    } else {
      joined.push_back(std::move(o));
    }
  }
  stats_.buffered_messages.store(joined.size(), std::memory_order_relaxed);
  out_.swap(joined);
}

void BusPublisher::put_snapshot_now(const SnapshotPtr& s, uint64_t stream_seq) {
  std::lock_guard lock(snap_mu_);
  const auto t0 = Clock::now();
  SnapshotHead h;
  std::string err;
  if (!put_snapshot(link_, *s, stream_seq, h, err)) {
    stats_.snapshot_failures.fetch_add(1, std::memory_order_relaxed);
    note_error("snapshot at seq " + std::to_string(s->seq) + " not published: " + err);
    return;
  }
  stats_.snapshots.fetch_add(1, std::memory_order_relaxed);
  stats_.last_snapshot_seq.store(h.seq, std::memory_order_relaxed);
  stats_.last_snapshot_bytes.store(h.bytes, std::memory_order_relaxed);
  stats_.last_snapshot_ms.store(
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count()),
      std::memory_order_relaxed);
}

// A log that went quiet still gets its newest state on the bus once the
// interval has passed, so an edge joining then does not replay (or miss,
// after retention) the records since the last snapshot.
void BusPublisher::snapshot_when_idle() {
  if (snap_pending_ || since_snapshot_ == 0 || !out_.empty() || !latest_ || latest_->seq != stored_last_) return;
  const auto now = Clock::now();
  if (now - last_snapshot_ < std::chrono::seconds(opts_.snapshot_seconds)) return;
  snap_pending_ = true;
  since_snapshot_ = 0;
  last_snapshot_ = now;
  std::lock_guard lock(job_mu_);
  jobs_.push_back(SnapJob{latest_, stored_stream_});
  job_cv_.notify_one();
}

void BusPublisher::snapshotter() {
  for (;;) {
    SnapJob job;
    {
      std::unique_lock lock(job_mu_);
      job_cv_.wait(lock, [&] { return !jobs_.empty() || snap_stop_; });
      if (snap_stop_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    put_snapshot_now(job.snap, job.stream_seq);
    snap_pending_ = false;
  }
}

}  // namespace oddsrelay::bus
