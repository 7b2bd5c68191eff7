// Connection I/O and lifecycle of one relay loop (see relay_loop.h): taking
// over upgraded sockets, the per-key stream limit, reading and parsing
// client frames, taking the hub's batches, writing each connection's queue in
// one writev per turn, the close handshake, the heartbeat and shutdown.
#include "relay/relay_loop.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <system_error>

#include "protocol/api/access_log.h"
#include "protocol/api/errors.h"
#include "protocol/clock.h"
#include "protocol/metrics/data_path.h"
#include "relay/frame_encoder.h"
#include "relay/write_pass.h"

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

StreamConn* stream_of(net::Conn& s) { return static_cast<StreamConn*>(s.owner); }

}  // namespace

RelayLoop::RelayLoop(const RelayOptions& opts, SnapshotPtr start, RelayStats& stats, api::KeySlots& slots,
                     bool publishes_window, const std::atomic<uint64_t>* hub_seq)
    : opts_(opts), stats_(stats), slots_(slots), pace_(opts.pace_pct), ctx_(opts, stats, std::move(start)) {
  ctx_.publishes_window = publishes_window;
  ctx_.hub_seq = hub_seq;
  uv_loop_init(&loop_);
  if (!wake_.init(
          &loop_, [](void* self) { static_cast<RelayLoop*>(self)->drain(); }, this))
    throw std::system_error(errno, std::generic_category(), "relay loop: eventfd");
  uv_async_init(&loop_, &stop_, [](uv_async_t* a) { static_cast<RelayLoop*>(a->data)->shutdown(); });
  stop_.data = this;
  uv_timer_init(&loop_, &tick_);
  tick_.data = this;
  if (pace_.on() && !pace_timer_.init(
                        &loop_,
                        [](void* self) {
                          auto* l = static_cast<RelayLoop*>(self);
                          l->now();
                          l->intake();
                          l->pass();
                        },
                        this))
    throw std::system_error(errno, std::generic_category(), "relay loop: timerfd");
  for (size_t i = 0; i < kModules; ++i) init_timer(timers_[i], *modules_[i]);
  ctx_.flush_now = [this](StreamConn* c) { flush(c); };
}

RelayLoop::~RelayLoop() { uv_loop_close(&loop_); }

// A module's one-shot timer (the /ws live_update pacing, the /pt-ws
// conflation flushes): the module's on_timer, then this turn's writes.
void RelayLoop::init_timer(ModuleTimer& t, StreamModule& m) {
  uv_timer_init(&loop_, &t.handle);
  t.handle.data = &t;
  t.loop = this;
  t.module = &m;
  m.arm_timer = [&t](uint64_t delay) {
    uv_timer_start(
        &t.handle,
        [](uv_timer_t* h) {
          auto* timer = static_cast<ModuleTimer*>(h->data);
          timer->loop->now();
          timer->module->on_timer();
          timer->loop->finish_turn();
        },
        delay, 0);
  };
}

void RelayLoop::run() {
  open_ring();
  now();
  ctx_.publish_window_stats();
  const uint64_t period = std::clamp<uint64_t>(static_cast<uint64_t>(opts_.ping_interval_ms) / 4, 10, 250);
  next_ping_ = now() + static_cast<uint64_t>(opts_.ping_interval_ms);
  uv_timer_start(
      &tick_, [](uv_timer_t* t) { static_cast<RelayLoop*>(t->data)->tick(); }, period, period);
  drain();  // batches and streams that arrived before the loop ran
  uv_run(&loop_, UV_RUN_DEFAULT);
}

// On the loop thread: the ring's one submitter (IORING_SETUP_SINGLE_ISSUER).
// A kernel or build without io_uring costs one line, once per process,
// and the loop writes with writev.
void RelayLoop::open_ring() {
  if (opts_.io != RelayOptions::Io::Uring) return;
  std::string why;
  static std::atomic<bool> said{false};
  const bool ok = ring_.open(why);
  if (said.exchange(true)) return;
  if (ok)
    std::fprintf(stderr, "oddsrelay: relay writes: io_uring (%s)\n", ring_.setup());
  else
    std::fprintf(stderr, "oddsrelay: relay writes: writev (--relay-io uring unavailable: %s)\n", why.c_str());
}

void RelayLoop::request_stop() { uv_async_send(&stop_); }

void RelayLoop::drain() {
  if (stopping_) return;
  now();
  Adoption a;
  while (adoptions.try_dequeue(a)) adopt(a);
  intake();
  if (pace_.on() && !ctx_.out.dirty.empty()) {
    // Too soon after the last pass: what this drain queued waits for the
    // timer's pass, with whatever else comes meanwhile.
    if (const uint64_t wait = pace_.wait_ns(uv_hrtime())) {
      if (!pace_timer_.armed()) {
        pace_timer_.start((wait + 999) / 1000);
        stats_.paced_passes.fetch_add(1, std::memory_order_relaxed);
      }
      return;
    }
  }
  pass();
}

void RelayLoop::intake() {
  take_batches();
  if (!parked_.empty()) unpark();
  ws_.schedule_live_update();
}

void RelayLoop::pass() {
  const uint64_t start = pace_.on() ? uv_hrtime() : 0;
  pace_timer_.stop();            // (a drain came at its time) this pass writes what it would have
  finish_turn(/*intake=*/true);  // one write per connection for everything this turn queued
  metrics::turn_written(pt_.size() > 0);
  if (pace_.on()) pace_.passed(start, uv_hrtime());
}

// The hub's frames, wrapped once for this loop, to every stream; batches
// that queued up while the loop was busy go out as one with one INFO. The
// loop's batch then goes into this loop's resume window.
size_t RelayLoop::take_batches() {
  took_.clear();
  size_t taken = 0;
  SharedBatchPtr t;
  while (batches.try_dequeue(t)) {
    if (t->reset) {
      send_taken();
      restart(*t);
      continue;
    }
    if (t->seq <= ctx_.snap->seq) continue;  // already part of the state the streams started from
    metrics::turn_batch(t->batch->apply_start_ns);
    ++taken;
    ctx_.snap = t->batch->snapshot;
    ws_.on_batch(*t);
    took_.push_back(std::move(t));
  }
  send_taken();
  return taken;
}

void RelayLoop::send_taken() {
  if (took_.empty()) return;
  if (took_.size() > 1) stats_.frames_encoded.fetch_add(1, std::memory_order_relaxed);  // this loop's INFO
  LoopBatch batch = local_batch(took_);
  pt_.fan_out(batch);
  ctx_.window.add(std::move(batch), ctx_.now);
  ctx_.publish_window_stats();
  took_.clear();
}

// The engine's state was replaced whole (an edge rejoining its log after a
// hole): nothing a stream was sent leads to the new state, and the window
// holds changes of the old one. Every stream is closed with 1012 (service
// restart): a client reconnects and gets the new snapshot, its resume
// refused (too_old, or other_epoch when the log changed). The window starts
// over at the new seq.
void RelayLoop::restart(const SharedBatch& t) {
  for (size_t i = 0; i < all_.size(); ++i) {  // closing unlists, never drops: all_ keeps its order
    StreamConn* c = all_[i];
    if (c->closing() || c->closed()) continue;
    close_with(c, CloseReason::Restart);
  }
  ctx_.snap = t.batch->snapshot;
  ctx_.window.clear();
  for (StreamModule* m : modules_) m->restart();
  ctx_.publish_window_stats();
}

void RelayLoop::adopt(Adoption& a) {
  auto* c = new StreamConn(this, std::move(a.ticket), opts_);
  const StreamBehavior& how = *c->behavior;
  c->module = modules_[static_cast<size_t>(how.module)];
  if (!c->sock.open(&loop_, a.fd, *this, read_buf_, c, /*read=*/false)) {
    c->state = ConnState::Closed;  // freed in on_closed
    load.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  // A peer that vanished without a FIN is found by the heartbeat; keepalive
  // also clears it from the kernel when pings are off or far apart.
  c->sock.keepalive(static_cast<unsigned>(std::clamp(opts_.ping_interval_ms / 1000, 1, 7200)));
  list_add(all_, c, &StreamConn::all_slot);
  c->last_pong = now();
  c->opened_ms = now();
  log_stream(c, true);
  Outbox& out = ctx_.out;
  c->deflate = c->ticket.deflate_offered && opts_.ws_compression && how.can_deflate;
  if (c->deflate) {
    c->parser.set_inflater(&inflater_);
    stats_.deflate_negotiated.fetch_add(1, std::memory_order_relaxed);
  }
  c->q.push_exempt(how.head(c->ticket, c->deflate));
  out.mark(c);
  if (!slots_.take(c->ticket.key_id, c->ticket.max_connections)) {
    // docs/api.md: the extra handshake completes, gets the error, and is closed.
    out.send_exempt(c, how.refusal(api::err::kTooManyStreams, ctx_.snap->seq));
    close_with(c, CloseReason::KeyLimit);
  } else {
    stats_.accepted.fetch_add(1, std::memory_order_relaxed);
    const api::StreamTicket& t = c->ticket;
    const uint64_t hub = ctx_.hub_seq ? ctx_.hub_seq->load(std::memory_order_acquire) : 0;
    if (t.resume == api::StreamTicket::Resume::Asked && t.resume_epoch == ctx_.snap->epoch &&
        t.resume_seq > ctx_.snap->seq && t.resume_seq <= hub) {
      // Another loop served this client up to a seq this loop has yet to
      // take: it starts when this loop gets there (batches are on their way),
      // so a resume never depends on which loop it lands on.
      c->state = ConnState::Parked;
      parked_.push_back(c);
    } else {
      accept_stream(c);
    }
  }
  if (c->closed()) return;
  if (c->state == ConnState::Parked) {
    c->sock.in = std::move(a.pending);  // read once it starts, so its messages apply to the started stream
    flush(c);
    return;
  }
  begin_reading(c, std::move(a.pending));
}

// The client's messages from now on, those it sent after its handshake first.
// The 101 and what the stream starts with go to the socket before those are
// read: a message that closes the stream clears what is still queued, and a
// client must get its handshake's answer before the close that follows it.
void RelayLoop::begin_reading(StreamConn* c, std::string pending) {
  c->sock.resume();
  flush(c);
  if (!c->closed() && !pending.empty()) on_readable(c, pending.data(), pending.size());
  if (!c->closed()) flush(c);
}

void RelayLoop::accept_stream(StreamConn* c) {
  c->module->add(c);
  start_stream(c);
}

void RelayLoop::unpark() {
  for (size_t i = 0; i < parked_.size();) {
    StreamConn* c = parked_[i];
    if (c->ticket.resume_seq > ctx_.snap->seq) {
      ++i;
      continue;
    }
    parked_[i] = parked_.back();
    parked_.pop_back();
    c->state = ConnState::Open;
    accept_stream(c);
    begin_reading(c, std::exchange(c->sock.in, std::string()));
  }
}

// With a usable resume=, what the stream missed; otherwise (and with a
// refusal's reason when it asked) the connect snapshot.
void RelayLoop::start_stream(StreamConn* c) {
  using V = ResumeWindow::Verdict;
  const api::StreamTicket& t = c->ticket;
  ResumeWindow::Lookup l{V::Resumed};
  if (t.resume == api::StreamTicket::Resume::Malformed)
    l = {V::Malformed};
  else if (t.resume == api::StreamTicket::Resume::Asked)
    l = ctx_.window.find(t.resume_epoch, t.resume_seq, ctx_.snap->epoch, ctx_.snap->seq);
  if (t.resume != api::StreamTicket::Resume::None)
    (l.verdict == V::Resumed ? stats_.resumed : stats_.resume_refused).fetch_add(1, std::memory_order_relaxed);
  c->module->start(c, l.verdict, l.first);
}

void RelayLoop::on_read(net::Conn& s, char* p, size_t n) { on_readable(stream_of(s), p, n); }

void RelayLoop::on_read_error(net::Conn& s) {
  StreamConn* c = stream_of(s);
  if (c->closed()) return;
  now();
  drop(c);
}

void RelayLoop::on_closed(net::Conn& s) {
  StreamConn* c = stream_of(s);
  ctx_.out.forget(c);  // a paced drain may have left it listed for the timer's pass
  delete c;
}

void RelayLoop::on_readable(StreamConn* c, char* p, size_t n) {
  if (c->closed()) return;
  now();
  if (n == 0 || c->parser.done() || !c->behavior->reads_client) return;  // an SSE client has nothing to say
  ParserHandler h{this, c};
  std::string& in = c->sock.in;
  if (in.empty()) {
    size_t used = c->parser.feed(p, n, h);
    if (!c->closed() && !c->parser.done() && used < n) in.assign(p + used, n - used);
  } else {
    in.append(p, n);
    size_t used = c->parser.feed(in.data(), in.size(), h);
    if (!c->closed()) in.erase(0, used);
  }
  if (in.capacity() > 2 * opts_.max_message + 64 && in.size() < 4096) in.shrink_to_fit();
  finish_turn();  // answers (pong, close, subscriptions) go out now
}

// Closes the doomed connections, then writes each dirty one once
// (write_pass.h). From a drain (`intake`), the loop also takes the batches
// that reach it while it writes, every kIntakeEvery connections of the
// pass: a connection not yet written carries them in the write it was
// about to get, instead of a write of its own one turn later; those already
// written are written again at the end of the pass. A loop that has fallen
// behind (a pass longer than the gap between batches) so makes one write
// per connection per pass, whatever the number of batches.
void RelayLoop::finish_turn(bool intake) {
  auto take = [this] {
    if (batches.size_approx() == 0) return;
    now();
    if (take_batches() != 0) stats_.mid_write_intakes.fetch_add(1, std::memory_order_relaxed);
  };
  auto close = [this](StreamConn* c) { close_with(c, CloseReason::QueueLimit); };
  auto write = [this](StreamConn* c) { flush(c); };
  in_pass_ = ring_.on();
  write_pass(ctx_.out, intake ? &take : nullptr, kIntakeEvery, close, write);
  // The pass's writes in one submission; a connection marked again while
  // its write was queued is written from its result, in another round.
  while (ring_.queued() > 0)
    for (const net::TurnWriter::Done& d : ring_.complete()) sent(static_cast<StreamConn*>(d.tag), d.result);
  in_pass_ = false;
}

void RelayLoop::close_with(StreamConn* c, CloseReason why, std::optional<std::string_view> text, uint16_t code) {
  if (c->closing() || c->closed()) return;
  if (c->state != ConnState::Doomed) count_close(stats_, why);  // the outbox counted a doomed one
  const CloseInfo& info = close_info(why);
  c->close_code = code ? code : info.code;
  c->close_reason = text.value_or(info.text);
  unlist(c);
  if (why != CloseReason::KeyLimit) c->q.clear();   // the refusal's error frame goes out before its close
  const bool handshake = c->behavior->close_frame;  // SSE: the socket just closes
  if (handshake) c->q.push_final(close_frame(c->close_code, c->close_reason));
  c->state = handshake ? ConnState::Closing : ConnState::ClosingWrite;
  c->close_deadline = now() + static_cast<uint64_t>(opts_.close_grace_ms);
  ctx_.out.mark(c);
}

void RelayLoop::flush(StreamConn* c) {
  while (!c->closed() && !c->q.in_flight() && c->q.has_queued()) {
    const size_t total = take_write(c);
    if (in_pass_ && ring_.on()) {  // finish_turn submits it with the pass's others
      ring_.queue(c->sock, c->bufs.data(), static_cast<unsigned>(c->bufs.size()), c);
      return;
    }
    if (!wrote(c, c->sock.write(c->bufs.data(), static_cast<unsigned>(c->bufs.size())), total)) return;
  }
}

size_t RelayLoop::take_write(StreamConn* c) {
  c->bufs.clear();
  size_t total = 0;
  c->q.take([&](std::string_view b) {
    c->bufs.push_back(uv_buf_init(const_cast<char*>(b.data()), static_cast<unsigned>(b.size())));
    total += b.size();
  });
  c->bytes_out += total;
  c->frames_out += c->bufs.size();
  if (!c->queued_markets.empty()) c->queued_markets.clear();  // nothing queued is replaceable any more
  stats_.writes.fetch_add(1, std::memory_order_relaxed);
  return total;
}

// The socket took `n` of the write's `total` bytes at once (< 0: failed,
// the connection is dropped). True when all of it left, so the queue may
// be written again; otherwise the rest is in flight (on_written).
bool RelayLoop::wrote(StreamConn* c, ssize_t n, size_t total) {
  if (n < 0) {
    c->q.written();
    drop(c);
    return false;
  }
  stats_.bytes_written.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
  if (static_cast<size_t>(n) < total) return false;
  c->q.written();
  if (c->state == ConnState::ClosingWrite && !c->q.has_queued()) drop(c);
  return true;
}

// A queued send's result: what the socket did not take goes on through
// libuv (Conn::sent), as after a partial writev; a full socket (-EAGAIN)
// hands it all there. A connection dropped meanwhile only lets its frames
// go: the kernel is done with them.
void RelayLoop::sent(StreamConn* c, ssize_t result) {
  if (c->closed()) {
    c->q.written();
    return;
  }
  size_t total = 0;
  for (const uv_buf_t& b : c->bufs) total += b.len;
  const ssize_t n = c->sock.sent(c->bufs.data(), static_cast<unsigned>(c->bufs.size()), result);
  if (wrote(c, n, total)) flush(c);
}

void RelayLoop::on_written(net::Conn& s, int status, size_t bytes) {
  StreamConn* c = stream_of(s);
  c->q.written();
  if (c->closed()) return;
  now();
  if (status < 0) {
    drop(c);
    return;
  }
  stats_.bytes_written.fetch_add(bytes, std::memory_order_relaxed);
  if (c->state == ConnState::ClosingWrite && !c->q.has_queued()) {
    drop(c);
    return;
  }
  flush(c);
}

// Off the fan-out lists; an accepted stream's key slot is free again.
void RelayLoop::unlist(StreamConn* c) {
  if (c->listed() || c->state == ConnState::Parked) slots_.give_back(c->ticket.key_id);
  if (c->state == ConnState::Parked) std::erase(parked_, c);
  c->module->remove(c);
}

// One access line when a stream opens, one when it is gone: its close code
// and reason (1006 when the peer went away first), frames and bytes sent.
void RelayLoop::log_stream(const StreamConn* c, bool open) {
  if (!access_log::log().on()) return;
  access_log::Stream s;
  s.client = c->ticket.client;
  s.key = c->ticket.key_name;
  s.path = c->behavior->path;
  s.open = open;
  if (!open) {
    const CloseInfo& lost = close_info(CloseReason::Lost);
    s.close_code = c->close_code ? c->close_code : lost.code;
    s.reason = c->close_code ? std::string_view(c->close_reason) : lost.text;
    s.frames = c->frames_out;
    s.bytes = c->bytes_out;
    s.millis = now() - c->opened_ms;
  }
  access_log::stream(s, wall_ms());
}

void RelayLoop::drop(StreamConn* c) {
  if (c->closed()) return;
  log_stream(c, false);
  unlist(c);
  c->state = ConnState::Closed;
  list_remove(all_, c, &StreamConn::all_slot);
  load.fetch_sub(1, std::memory_order_relaxed);
  // Still listed in the outbox while it is walked: flush and close_with
  // skip a closed connection, and the handle is freed only in the close
  // callback, after this turn.
  c->q.clear();
  c->sock.close();
}

void RelayLoop::on_message(StreamConn* c, ws::Opcode op, std::string_view payload) {
  if (op == ws::kText && !c->closing()) c->module->on_text(c, payload);
}

void RelayLoop::on_ping(StreamConn* c, std::string_view payload) {
  ctx_.out.send(c, control_frame(ws::kPong, payload));
}

void RelayLoop::on_pong(StreamConn* c) { c->last_pong = now(); }

void RelayLoop::on_close(StreamConn* c, uint16_t code) {
  if (c->closing()) {  // the answer to our close: the handshake is complete
    drop(c);
    return;
  }
  // Echo the client's code (RFC 6455 5.5.1), then close the socket.
  close_with(c, CloseReason::PeerClosed, "", code == ws::kNoStatus ? uint16_t{0} : code);
  if (c->state == ConnState::Closing) c->state = ConnState::ClosingWrite;
}

void RelayLoop::on_error(StreamConn* c, uint16_t code, const char* reason) {
  close_with(c, CloseReason::Protocol, reason, code);
  if (c->state == ConnState::Closing)
    c->state = ConnState::ClosingWrite;  // a broken peer's close is not worth waiting for
}

// Periodic: connections past their close deadline are dropped, slow
// consumers are closed, and the heartbeat runs.
void RelayLoop::tick() {
  const uint64_t t = now();
  ctx_.window.evict(t);
  ctx_.publish_window_stats();
  for (size_t i = 0; i < all_.size();) {
    StreamConn* c = all_[i];
    if (c->closing() && t >= c->close_deadline)
      drop(c);  // swaps another into slot i
    else
      ++i;
  }
  watch_slow(t);
  if (t >= next_ping_) heartbeat(t);
  finish_turn();
}

// Slow consumers (RelayOptions::slow_timeout_ms): the hard byte bound
// (Outbox::send) catches a client that falls far behind at once; this
// catches one that stays behind, which conflation would otherwise keep just
// under the bound for as long as it stays connected. A stream is closed
// when nothing it was sent has left for the timeout (its write stalled), or
// when it has held more than a quarter of the bound for the timeout.
void RelayLoop::watch_slow(uint64_t t) {
  if (opts_.slow_timeout_ms <= 0) return;
  const uint64_t limit = static_cast<uint64_t>(opts_.slow_timeout_ms);
  const size_t soft = opts_.max_queue_bytes / 4;
  std::vector<std::pair<StreamConn*, bool>> slow;  // (connection, stalled)
  for (StreamConn* c : all_) {
    if (c->closing()) continue;  // its close has its own deadline
    const size_t held = c->q.bytes();
    if (held == 0)
      c->sock.last_written = t;  // nothing waiting: not behind
    else
      c->sock.note_progress(t);  // the client taking bytes, as the socket sees it
    if (held > soft) {
      if (c->over_soft_since == 0) c->over_soft_since = t;
    } else {
      c->over_soft_since = 0;
    }
    if (held > 0 && t - c->sock.last_written >= limit)
      slow.push_back({c, true});
    else if (c->over_soft_since && t - c->over_soft_since >= limit)
      slow.push_back({c, false});
  }
  const std::string secs = std::to_string(limit / 1000) + " s";
  for (auto [c, stalled] : slow) {
    const CloseReason why = stalled ? CloseReason::Stalled : CloseReason::SoftLimit;
    close_with(c, why, close_text(why, secs));
  }
}

// Both streams: a ping every interval; a client that has sent no pong for
// two intervals is closed 1008, which frees its key's slot at once.
void RelayLoop::heartbeat(uint64_t t) {
  next_ping_ = t + static_cast<uint64_t>(opts_.ping_interval_ms);
  FrameRef ping = control_frame(ws::kPing, "hb");
  const uint64_t limit = 2 * static_cast<uint64_t>(opts_.ping_interval_ms);
  std::vector<StreamConn*> silent;
  auto beat = [&](StreamConn* c) {
    if (!c->behavior->pongs) c->last_pong = t;  // no pongs over SSE: TCP keepalive finds a vanished peer
    if (t - c->last_pong > limit)
      silent.push_back(c);
    else
      ctx_.out.send(c, ping);
  };
  for (StreamConn* c : all_)
    if (c->listed()) beat(c);  // accepted and open: in its module's list
  const std::string reason = close_text(CloseReason::Heartbeat, std::to_string(limit / 1000) + " s");
  for (StreamConn* c : silent) close_with(c, CloseReason::Heartbeat, reason);
}

void RelayLoop::shutdown() {
  stopping_ = true;
  const CloseInfo& end = close_info(CloseReason::Shutdown);
  FrameRef bye = close_frame(end.code, end.text);
  while (!all_.empty()) {
    StreamConn* c = all_.back();
    if (!c->closing()) {
      c->q.clear();
      c->q.push_final(bye);
      flush(c);  // best effort: whatever the socket takes now
    }
    drop(c);
  }
  // Sockets adopted after this point are closed unused.
  Adoption a;
  while (adoptions.try_dequeue(a)) ::close(a.fd);
  wake_.close();
  uv_close(reinterpret_cast<uv_handle_t*>(&stop_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&tick_), nullptr);
  if (pace_.on()) pace_timer_.close();
  for (ModuleTimer& t : timers_) uv_close(reinterpret_cast<uv_handle_t*>(&t.handle), nullptr);
}

}  // namespace oddsrelay::relay
