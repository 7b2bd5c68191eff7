// Connection I/O and lifecycle of the relay loop (see relay_loop.h): taking
// over upgraded sockets, the per-key stream limit, reading and parsing
// client frames, writing each connection's queue in one writev per turn,
// the close handshake, the /ws heartbeat and shutdown.
#include "relay/relay_loop.h"

#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "engine/metrics/data_path.h"
#include "relay/frame_encoder.h"
#include "rest/errors.h"

namespace oddsrelay::relay {

namespace {

// Adapts the frame parser's handler interface to one connection.
struct ParserHandler {
  RelayLoop* loop;
  StreamConn* c;
  void on_message(ws::Opcode op, std::string_view p) { loop->on_message(c, op, p); }
  void on_ping(std::string_view p) { loop->on_ping(c, p); }
  void on_pong(std::string_view) { loop->on_pong(c); }
  void on_close(uint16_t code, std::string_view) { loop->on_close(c, code); }
  void on_error(uint16_t code, const char* why) { loop->on_error(c, code, why); }
};

template <class V>
void vec_remove(V& v, StreamConn* c, uint32_t StreamConn::*slot) {
  uint32_t i = c->*slot;
  if (i == UINT32_MAX) return;
  v[i] = v.back();
  v[i]->*slot = i;
  v.pop_back();
  c->*slot = UINT32_MAX;
}

}  // namespace

struct LoopCallbacks {
  static void on_alloc(uv_handle_t* h, size_t, uv_buf_t* b) {
    auto* c = static_cast<StreamConn*>(h->data);
    *b = uv_buf_init(c->loop->read_buf_, sizeof c->loop->read_buf_);
  }
  static void on_read(uv_stream_t* s, ssize_t n, const uv_buf_t* b) {
    auto* c = static_cast<StreamConn*>(s->data);
    c->loop->on_readable(c, n, b);
  }
  static void on_write(uv_write_t* req, int status) {
    auto* c = static_cast<StreamConn*>(req->data);
    c->loop->on_written(c, status);
  }
};

RelayLoop::RelayLoop(const RelayOptions& opts, const SnapshotStore& store, RelayStats& stats)
    : opts_(opts), store_(store), stats_(stats),
      window_(opts.resume_window_bytes, static_cast<uint64_t>(std::max(opts.resume_window_ms, 0))) {
  uv_loop_init(&loop_);
  uv_async_init(&loop_, &wake_, [](uv_async_t* a) { static_cast<RelayLoop*>(a->data)->drain(); });
  wake_.data = this;
  uv_async_init(&loop_, &stop_, [](uv_async_t* a) { static_cast<RelayLoop*>(a->data)->shutdown(); });
  stop_.data = this;
  uv_timer_init(&loop_, &tick_);
  tick_.data = this;
  uv_timer_init(&loop_, &live_timer_);
  live_timer_.data = this;
}

RelayLoop::~RelayLoop() { uv_loop_close(&loop_); }

void RelayLoop::run() {
  // The state streams start from: whatever the engine holds when the relay
  // starts (after the journal replay), then every batch after it.
  snap_ = store_.load();
  publish_window_stats();
  const uint64_t period = std::clamp<uint64_t>(static_cast<uint64_t>(opts_.ping_interval_ms) / 4, 10, 250);
  next_ping_ = now() + static_cast<uint64_t>(opts_.ping_interval_ms);
  uv_timer_start(&tick_, [](uv_timer_t* t) { static_cast<RelayLoop*>(t->data)->tick(); }, period, period);
  drain();  // batches that arrived before the loop ran
  uv_run(&loop_, UV_RUN_DEFAULT);
}

void RelayLoop::request_stop() { uv_async_send(&stop_); }

void RelayLoop::drain() {
  if (stopping_) return;
  Adoption a;
  while (adoptions.try_dequeue(a)) adopt(a);
  BatchPtr b;
  while (batches.try_dequeue(b)) process(*b);
  fan_out();
  schedule_live_update();
  finish_turn();  // one write per connection for everything this turn queued
  metrics::turn_written(!pt_.empty());
}

void RelayLoop::adopt(Adoption& a) {
  auto* c = new StreamConn(this, std::move(a.ticket), opts_);
  uv_tcp_init(&loop_, &c->tcp);
  c->tcp.data = c;
  c->wreq.data = c;
  if (uv_tcp_open(&c->tcp, a.fd) != 0) {
    ::close(a.fd);
    c->closed = true;
    uv_close(reinterpret_cast<uv_handle_t*>(&c->tcp), [](uv_handle_t* h) { delete static_cast<StreamConn*>(h->data); });
    return;
  }
  uv_tcp_nodelay(&c->tcp, 1);
  // A peer that vanished without a FIN is found by the heartbeat; keepalive
  // also clears it from the kernel when pings are off or far apart.
  uv_tcp_keepalive(&c->tcp, 1, static_cast<unsigned>(std::clamp(opts_.ping_interval_ms / 1000, 1, 7200)));
  c->all_slot = static_cast<uint32_t>(all_.size());
  all_.push_back(c);
  c->last_pong = c->last_progress = now();
  send_exempt(c, raw_bytes("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    "Sec-WebSocket-Accept: " + c->ticket.accept + "\r\n\r\n"));
  uint32_t& held = key_slots_[c->ticket.key_id];
  if (held >= c->ticket.max_connections) {
    // docs/api.md: the extra handshake completes, gets the error, and is closed.
    stats_.refused_limit.fetch_add(1, std::memory_order_relaxed);
    if (c->is_pt()) send_exempt(c, text_frame(std::string("{\"error\":\"") + rest::err::kTooManyStreams + "\"}"));
    else send_exempt(c, ws_error(rest::err::kTooManyStreams, snap_->seq));
    close_with(c, ws::kPolicyViolation, "too many connections for this API key", /*discard_queued=*/false);
    if (held == 0) key_slots_.erase(c->ticket.key_id);  // a key allowed no streams: no count to keep
  } else {
    ++held;
    c->holds_key_slot = true;
    stats_.accepted.fetch_add(1, std::memory_order_relaxed);
    auto& list = c->is_pt() ? pt_ : ws_;
    c->fan_slot = static_cast<uint32_t>(list.size());
    list.push_back(c);
    if (c->is_pt()) ++pt_by_classes_[stream_event_classes(c)];
    (c->is_pt() ? stats_.pt_connections : stats_.ws_connections).fetch_add(1, std::memory_order_relaxed);
    start_stream(c);
  }
  if (c->closed) return;
  uv_read_start(reinterpret_cast<uv_stream_t*>(&c->tcp), LoopCallbacks::on_alloc, LoopCallbacks::on_read);
  if (!a.pending.empty()) {
    uv_buf_t b = uv_buf_init(a.pending.data(), static_cast<unsigned>(a.pending.size()));
    on_readable(c, static_cast<ssize_t>(a.pending.size()), &b);
  }
  if (!c->closed) flush(c);
}

void RelayLoop::on_readable(StreamConn* c, ssize_t n, const uv_buf_t* buf) {
  if (c->closed) return;
  if (n < 0) {
    drop(c);
    return;
  }
  if (n == 0 || c->parser.done()) return;
  ParserHandler h{this, c};
  if (c->in.empty()) {
    size_t used = c->parser.feed(buf->base, static_cast<size_t>(n), h);
    if (!c->closed && !c->parser.done() && used < static_cast<size_t>(n)) c->in.assign(buf->base + used, n - used);
  } else {
    c->in.append(buf->base, static_cast<size_t>(n));
    size_t used = c->parser.feed(c->in.data(), c->in.size(), h);
    if (!c->closed) c->in.erase(0, used);
  }
  if (c->in.capacity() > 2 * opts_.max_message + 64 && c->in.size() < 4096) c->in.shrink_to_fit();
  finish_turn();  // answers (pong, close, subscriptions) go out now
}

void RelayLoop::send(StreamConn* c, FrameRef f, uint64_t channel) {
  if (c->close_sent || c->closed || c->doomed) return;
  if (!c->q.push(std::move(f), channel)) {
    // Closed at the end of the turn: the caller may be iterating the lists
    // that closing changes.
    stats_.closed_slow.fetch_add(1, std::memory_order_relaxed);
    c->doomed = true;
    c->q.clear();
    doomed_.push_back(c);
    return;
  }
  if (!c->dirty) {
    c->dirty = true;
    dirty_.push_back(c);
  }
}

void RelayLoop::send_exempt(StreamConn* c, FrameRef f, uint64_t channel) {
  if (c->close_sent || c->closed || c->doomed) return;
  c->q.push_exempt(std::move(f), channel);
  if (!c->dirty) {
    c->dirty = true;
    dirty_.push_back(c);
  }
}

void RelayLoop::finish_turn() {
  for (StreamConn* c : doomed_) close_with(c, ws::kPolicyViolation, "send queue over limit: client too slow");
  doomed_.clear();
  for (size_t i = 0; i < dirty_.size(); ++i) {  // flush may drop a connection, never add one
    StreamConn* c = dirty_[i];
    c->dirty = false;
    flush(c);
  }
  dirty_.clear();
}

void RelayLoop::close_with(StreamConn* c, uint16_t code, std::string_view reason, bool discard_queued) {
  if (c->close_sent || c->closed) return;
  release_key_slot(c);
  unlist(c);
  if (discard_queued) c->q.clear();
  c->q.push_final(close_frame(code, reason));
  c->close_sent = true;
  c->close_deadline = now() + static_cast<uint64_t>(opts_.close_grace_ms);
  if (!c->dirty) {
    c->dirty = true;
    dirty_.push_back(c);
  }
}

void RelayLoop::flush(StreamConn* c) {
  auto* s = reinterpret_cast<uv_stream_t*>(&c->tcp);
  while (!c->closed && !c->q.in_flight() && c->q.has_queued()) {
    c->bufs.clear();
    size_t total = 0;
    c->q.take([&](std::string_view b) {
      c->bufs.push_back(uv_buf_init(const_cast<char*>(b.data()), static_cast<unsigned>(b.size())));
      total += b.size();
    });
    if (!c->queued_markets.empty()) c->queued_markets.clear();  // nothing queued is replaceable any more
    // Straight into the socket when it has room (the common case: no
    // request, no callback); libuv queues only what does not fit.
    int n = uv_try_write(s, c->bufs.data(), static_cast<unsigned>(c->bufs.size()));
    if (n == UV_EAGAIN) n = 0;
    if (n < 0) {
      c->q.written();
      drop(c);
      return;
    }
    stats_.bytes_written.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
    if (n > 0) c->last_progress = now();
    if (static_cast<size_t>(n) == total) {
      c->q.written();
      if (c->close_sent && !c->q.has_queued() && c->close_after_write) drop(c);
      continue;
    }
    size_t skip = static_cast<size_t>(n), i = 0;
    while (skip >= c->bufs[i].len) skip -= c->bufs[i++].len;
    c->bufs[i].base += skip;
    c->bufs[i].len -= static_cast<unsigned>(skip);
    c->write_rest = total - static_cast<size_t>(n);
    if (uv_write(&c->wreq, s, c->bufs.data() + i, static_cast<unsigned>(c->bufs.size() - i), LoopCallbacks::on_write) != 0) {
      c->q.written();
      drop(c);
    }
    return;
  }
}

void RelayLoop::on_written(StreamConn* c, int status) {
  c->q.written();
  if (c->closed) return;
  if (status < 0) {
    drop(c);
    return;
  }
  stats_.bytes_written.fetch_add(c->write_rest, std::memory_order_relaxed);
  c->last_progress = now();
  c->write_queue_seen = 0;
  if (c->close_sent && c->close_after_write && !c->q.has_queued()) {
    drop(c);
    return;
  }
  flush(c);
}

void RelayLoop::unlist(StreamConn* c) {
  if (c->fan_slot != UINT32_MAX) {
    (c->is_pt() ? stats_.pt_connections : stats_.ws_connections).fetch_sub(1, std::memory_order_relaxed);
    if (c->is_pt()) --pt_by_classes_[stream_event_classes(c)];
    vec_remove(c->is_pt() ? pt_ : ws_, c, &StreamConn::fan_slot);
  }
  unsubscribe_all(c);
}

void RelayLoop::release_key_slot(StreamConn* c) {
  if (!c->holds_key_slot) return;
  c->holds_key_slot = false;
  auto it = key_slots_.find(c->ticket.key_id);
  if (it != key_slots_.end() && --it->second == 0) key_slots_.erase(it);
}

void RelayLoop::drop(StreamConn* c) {
  if (c->closed) return;
  c->closed = true;
  release_key_slot(c);
  unlist(c);
  vec_remove(all_, c, &StreamConn::all_slot);
  // Still listed in dirty_/doomed_ while they are walked: flush and
  // close_with skip a closed connection, and the handle is freed only in
  // the close callback, after this turn.
  c->q.clear();
  uv_close(reinterpret_cast<uv_handle_t*>(&c->tcp), [](uv_handle_t* h) { delete static_cast<StreamConn*>(h->data); });
}

void RelayLoop::on_message(StreamConn* c, ws::Opcode op, std::string_view payload) {
  // /pt-ws has no client messages (no subscribe step): they are ignored.
  if (!c->is_pt() && op == ws::kText && !c->close_sent) on_subscribe_message(c, payload);
}

void RelayLoop::on_ping(StreamConn* c, std::string_view payload) { send(c, control_frame(ws::kPong, payload)); }

void RelayLoop::on_pong(StreamConn* c) { c->last_pong = now(); }

void RelayLoop::on_close(StreamConn* c, uint16_t code) {
  if (c->close_sent) {  // the answer to our close: the handshake is complete
    drop(c);
    return;
  }
  // Echo the client's code (RFC 6455 5.5.1), then close the socket.
  close_with(c, code == ws::kNoStatus ? uint16_t{ws::kNormal} : code, "");
  c->close_after_write = true;
}

void RelayLoop::on_error(StreamConn* c, uint16_t code, const char* reason) {
  stats_.closed_protocol.fetch_add(1, std::memory_order_relaxed);
  close_with(c, code, reason);
  c->close_after_write = true;  // a broken peer's close is not worth waiting for
}

// Periodic: connections past their close deadline are dropped, slow
// consumers are closed, and the heartbeat runs.
void RelayLoop::tick() {
  const uint64_t t = now();
  window_.evict(t);
  publish_window_stats();
  for (size_t i = 0; i < all_.size();) {
    StreamConn* c = all_[i];
    if (c->close_sent && t >= c->close_deadline) drop(c);  // swaps another into slot i
    else ++i;
  }
  watch_slow(t);
  if (t >= next_ping_) heartbeat(t);
  finish_turn();
}

// Slow consumers (RelayOptions::slow_timeout_ms): the hard byte bound
// (send()) catches a client that falls far behind at once; this catches one
// that stays behind, which conflation would otherwise keep just under the
// bound for as long as it stays connected. A stream is closed when nothing
// it was sent has left for the timeout (its write stalled), or when it has
// held more than a quarter of the bound for the timeout.
void RelayLoop::watch_slow(uint64_t t) {
  if (opts_.slow_timeout_ms <= 0) return;
  const uint64_t limit = static_cast<uint64_t>(opts_.slow_timeout_ms);
  const size_t soft = opts_.max_queue_bytes / 4;
  std::vector<std::pair<StreamConn*, bool>> slow;  // (connection, stalled)
  for (StreamConn* c : all_) {
    if (c->close_sent) continue;  // its close has its own deadline
    const size_t held = c->q.bytes();
    if (held == 0) {
      c->last_progress = t;  // nothing waiting: not behind
    } else {
      // Progress is the client taking bytes: the kernel's unsent bytes on
      // the socket going down (the kernel wakes libuv only once a good part
      // of a large send buffer is free), or libuv's pending write shrinking.
      const size_t wq = uv_stream_get_write_queue_size(reinterpret_cast<uv_stream_t*>(&c->tcp));
      size_t outq = c->kernel_unsent_seen;
      uv_os_fd_t fd;
      int unsent = 0;
      if (uv_fileno(reinterpret_cast<uv_handle_t*>(&c->tcp), &fd) == 0 && ::ioctl(fd, SIOCOUTQ, &unsent) == 0)
        outq = static_cast<size_t>(unsent);
      if (wq < c->write_queue_seen || outq < c->kernel_unsent_seen) c->last_progress = t;
      c->write_queue_seen = wq;
      c->kernel_unsent_seen = outq;
    }
    if (held > soft) {
      if (c->over_soft_since == 0) c->over_soft_since = t;
    } else {
      c->over_soft_since = 0;
    }
    if (held > 0 && t - c->last_progress >= limit) slow.push_back({c, true});
    else if (c->over_soft_since && t - c->over_soft_since >= limit) slow.push_back({c, false});
  }
  const std::string secs = std::to_string(limit / 1000) + " s";
  for (auto [c, stalled] : slow) {
    (stalled ? stats_.closed_stalled : stats_.closed_soft_limit).fetch_add(1, std::memory_order_relaxed);
    close_with(c, ws::kPolicyViolation, stalled ? "client too slow: no write progress for " + secs
                                                : "client too slow: send queue over its soft limit for " + secs);
  }
}

// Both streams: a ping every interval; a client that has sent no pong for
// two intervals is closed 1008, which frees its key's slot at once.
void RelayLoop::heartbeat(uint64_t t) {
  next_ping_ = t + static_cast<uint64_t>(opts_.ping_interval_ms);
  FrameRef ping = control_frame(ws::kPing, "hb");
  const uint64_t limit = 2 * static_cast<uint64_t>(opts_.ping_interval_ms);
  std::vector<StreamConn*> silent;
  for (auto* list : {&ws_, &pt_})
    for (StreamConn* c : *list) {
      if (t - c->last_pong > limit) silent.push_back(c);
      else send(c, ping);
    }
  const std::string reason = "no pong within " + std::to_string(limit / 1000) + " s";
  for (StreamConn* c : silent) {
    stats_.closed_heartbeat.fetch_add(1, std::memory_order_relaxed);
    close_with(c, ws::kPolicyViolation, reason);
  }
}

void RelayLoop::shutdown() {
  stopping_ = true;
  FrameRef bye = close_frame(ws::kGoingAway, "server shutting down");
  while (!all_.empty()) {
    StreamConn* c = all_.back();
    if (!c->close_sent) {
      c->q.clear();
      c->q.push_final(bye);
      flush(c);  // best effort: whatever the socket takes now
    }
    drop(c);
  }
  // Sockets adopted after this point are closed unused.
  Adoption a;
  while (adoptions.try_dequeue(a)) ::close(a.fd);
  uv_close(reinterpret_cast<uv_handle_t*>(&wake_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&stop_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&tick_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&live_timer_), nullptr);
}

// RelayServer: the public face.

RelayServer::RelayServer(RelayOptions opts, const SnapshotStore& store) : opts_(opts), store_(store) {
  loop_ = std::make_unique<RelayLoop>(opts_, store_, stats_);
}

RelayServer::~RelayServer() { stop(); }

void RelayServer::start() {
  running_ = true;
  thread_ = std::thread([this] { loop_->run(); });
}

void RelayServer::stop() {
  running_ = false;
  if (!thread_.joinable()) return;
  loop_->request_stop();
  thread_.join();
}

void RelayServer::on_batch(const BatchPtr& batch) {
  while (loop_->batches.size_approx() >= kMaxSinkBacklog && running_.load(std::memory_order_relaxed)) {
    loop_->wake();
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  loop_->batches.enqueue(batch);
  loop_->wake();
}

void RelayServer::adopt(rest::StreamTicket ticket, int fd, std::string pending) {
  loop_->adoptions.enqueue(RelayLoop::Adoption{std::move(ticket), fd, std::move(pending)});
  loop_->wake();
}

void RelayServer::write_status(json::Writer& w) const {
  auto field = [&](const char* k, const std::atomic<uint64_t>& v) {
    w.Key(k);
    w.Uint64(v.load(std::memory_order_relaxed));
  };
  w.StartObject();
  field("pt_ws_connections", stats_.pt_connections);
  field("ws_connections", stats_.ws_connections);
  field("accepted", stats_.accepted);
  field("refused_key_limit", stats_.refused_limit);
  field("batches", stats_.batches);
  field("frames_encoded", stats_.frames_encoded);
  field("deliveries", stats_.deliveries);
  field("bytes_written", stats_.bytes_written);
  field("conflated", stats_.conflated);
  field("closed_slow", stats_.closed_slow);
  field("closed_heartbeat", stats_.closed_heartbeat);
  field("closed_protocol", stats_.closed_protocol);
  field("closed_stalled", stats_.closed_stalled);
  field("closed_soft_limit", stats_.closed_soft_limit);
  field("closed_restart", stats_.closed_restart);
  field("resumed", stats_.resumed);
  field("resume_refused", stats_.resume_refused);
  w.Key("resume_window");
  w.StartObject();
  field("groups", stats_.window_groups);
  field("bytes", stats_.window_bytes);
  field("oldest_seq", stats_.window_oldest);
  w.EndObject();
  w.EndObject();
}

}  // namespace oddsrelay::relay
