#include "rest/http_server.h"

#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

#include "protocol/api/access_log.h"
#include "protocol/api/errors.h"
#include "protocol/clock.h"
#include "protocol/named_thread.h"
#include "protocol/net/conn.h"
#include "protocol/net/conn_list.h"
#include "rest/client_address.h"
#include "rest/proxy_protocol.h"
#include "rest/request_metrics.h"

namespace oddsrelay::rest {

namespace {

// One connection; owned by the loop thread, freed when its socket closes.
// Its life is the socket's state (protocol/net/conn.h): Open, Paused
// (backpressure, or a hand-over waiting for its answers to go out),
// Draining (closed once the answers are written), Closed.
struct Conn {
  net::Conn sock;              // its `in`: received, not yet consumed
  uint32_t slot = UINT32_MAX;  // position in Impl::conns
  http::RequestParser parser;
  Peer peer;
  uint64_t request_started = 0;  // loop ms when the pending request's first byte came; 0 = none
  net::OutQueue out;             // the answers not yet written, the write in flight's included
  size_t counted = 0;            // out's bytes as counted in HttpStats::unsent_bytes
  bool proxy_checked = false;    // the connection's first bytes were looked at for a PROXY line
  bool last = false;             // answered its last request: closes once written
  bool continued = false;        // `100 Continue` sent for the request whose body is arriving
  bool sized = false;            // its send buffer was set (before its first answer)
  size_t sndbuf = 0;             // its SO_SNDBUF now: HttpServerOptions::sndbuf, grown by quick drains
  uint64_t full_since = 0;       // loop ms when its socket last refused bytes (a write waits); 0 = none
  Takeover takeover;             // set: hand the socket over once nothing is unsent
  size_t unsent() const { return out.size(); }
};

// Why the listener closes a connection: each reason is one HttpStats counter
// (rest/http_stats.h: the closed_* fields and oddsrelay_http_closes_total).
enum class HttpClose : uint8_t { UnsentTotal, Stalled, Idle, HeaderTimeout };

}  // namespace

struct HttpServer::Impl : net::ConnHandler {
  HttpServer* owner = nullptr;
  uint32_t index = 0;
  uv_loop_t loop;
  int listen_fd = -1;                 // loop 0 only: the listening socket, polled for readability
  uv_poll_t listener;                 // loop 0 only
  bool accepting = false;             // loop 0: polling the listener (off for a moment when out of descriptors)
  uint32_t next = 0;                  // loop 0: the loop the next connection goes to
  std::atomic<uint64_t> requests{0};  // answered on this loop
  uv_async_t stop_async;
  uv_async_t incoming_async;  // sockets dealt to this loop are waiting
  uv_timer_t sweep;
  uv_check_t over_total;  // after the loop turn: closes the stalest connections while over max_unsent_total
  bool checking = false;  // over_total is started
  uv_async_t over_asked;  // another loop found this loop's stalest connection the process's stalest
  // The last write progress (loop ms; the loops share the clock) of this
  // loop's connection longest without it among those owing bytes, for the
  // other loops' choice; UINT64_MAX: none. Refreshed by the sweep and the check.
  std::atomic<uint64_t> stalest{UINT64_MAX};
  std::atomic<bool> stopping{false};
  std::mutex incoming_mu;
  std::vector<int> incoming;  // accepted by loop 0 for this loop
  std::vector<Conn*> conns;
  net::ReadBuffer read_buf;

  void on_read(net::Conn& s, char* p, size_t n) override;
  void on_read_error(net::Conn& s) override { s.close(); }
  void on_written(net::Conn& s, int status, size_t bytes) override;
  void on_closed(net::Conn& s) override;
  // Brings HttpStats::unsent_bytes in step with c's queue (a closed
  // connection counts nothing: its bytes go with it), and past the total
  // bound has the stalest connections closed after this loop turn.
  void account(Conn* c);
  void process(Conn* c);  // answers the complete requests in c's buffer, as the bounds allow
  void close(Conn* c, HttpClose why);
};

namespace {

// Detaches the socket: a duplicate descriptor goes to the new owner, our
// handle closes (the socket lives on through the duplicate). A failed dup
// just closes the connection.
void hand_over(Conn* c) {
  Takeover t = std::move(c->takeover);
  c->takeover = nullptr;
  const int dup_fd = c->sock.dup_fd();
  std::string pending = std::move(c->sock.in);
  c->sock.close();
  if (dup_fd >= 0) t(dup_fd, std::move(pending));
}

// Writes what c owes (what the socket takes now, the rest with one
// uv_write whose pieces stay queued until on_written), unless a write is in
// flight. False if the connection closed.
// A connection whose socket filled and then drained its whole queue within
// kQuickDrainMs reads as fast as we write: its send buffer doubles, up to
// kSndbufGrowth times the configured one, so a large answer to a fast
// reader goes in one write rather than one per loop turn. A slow reader
// never drains quickly and keeps the bound (--http-sndbuf).
constexpr uint64_t kQuickDrainMs = 2;
constexpr size_t kSndbufGrowth = 8;

void grow_if_quick(Conn* c, size_t configured, uint64_t now) {
  if (c->full_since == 0 || !c->out.empty()) return;
  const bool quick = now - c->full_since <= kQuickDrainMs;
  c->full_since = 0;
  if (!quick || configured == 0 || c->sndbuf >= configured * kSndbufGrowth) return;
  c->sndbuf = std::min(c->sndbuf * 2, configured * kSndbufGrowth);
  c->sock.send_buffer(static_cast<int>(c->sndbuf));
}

bool send(Conn* c, uint64_t now) {
  constexpr unsigned kMaxBufs = 64;  // pieces per writev; the rest goes after
  // The send buffer is bounded at the first answer, not at accept: a
  // connection handed to the relay (an upgrade; the relay writes its 101)
  // keeps the kernel's autotuning and the relay's own bounds.
  if (!c->sized && !c->out.empty()) {
    c->sized = true;
    if (c->sndbuf > 0) c->sock.send_buffer(static_cast<int>(c->sndbuf));
  }
  while (!c->sock.writing() && !c->out.empty()) {
    uv_buf_t bufs[kMaxBufs];
    const unsigned n = c->out.gather(bufs, kMaxBufs);
    const ssize_t took = c->sock.write(bufs, n);
    if (took < 0) {
      c->sock.close();
      return false;
    }
    c->out.consume(static_cast<size_t>(took));  // what is in flight stays queued
    if (c->sock.writing() && c->full_since == 0) c->full_since = now == 0 ? 1 : now;
  }
  return true;
}

void count_close(HttpStats& s, HttpClose why) {
  std::atomic<uint64_t>* const counters[] = {&s.closed_unsent_total, &s.closed_stalled, &s.closed_idle,
                                             &s.closed_header_timeout};
  counters[static_cast<size_t>(why)]->fetch_add(1, std::memory_order_relaxed);
}

// This loop's connection longest without write progress among those
// owing bytes (null: none), published for the other loops.
Conn* stalest(HttpServer::Impl* srv) {
  Conn* victim = nullptr;
  for (Conn* c : srv->conns)
    if (!c->sock.closed() && c->counted > 0 && (!victim || c->sock.last_written < victim->sock.last_written))
      victim = c;
  srv->stalest.store(victim ? victim->sock.last_written : UINT64_MAX, std::memory_order_relaxed);
  return victim;
}

// The loop whose published stalest connection is older than `than`, or null.
HttpServer::Impl* older_loop(HttpServer::Impl* srv, uint64_t than) {
  HttpServer::Impl* older = nullptr;
  for (size_t i = 0; i < srv->owner->loop_count(); ++i) {
    HttpServer::Impl& o = srv->owner->loop_impl(i);
    const uint64_t t = o.stalest.load(std::memory_order_relaxed);
    if (&o != srv && t < than && !o.stopping.load(std::memory_order_acquire)) {
      older = &o;
      than = t;
    }
  }
  return older;
}

// The bound's victims, after the loop turn (like Redis's freeClientAsync:
// never in the middle of a connection's callback): while the process owes
// more than max_unsent_total, the connection that has gone longest without
// write progress is closed. The loops compare what they published; when
// another loop holds the stalest, that loop is asked to close it (`asked`:
// this loop was, and closes its own without comparing again).
void close_stalest(HttpServer::Impl* srv, bool asked) {
  HttpStats& st = srv->owner->stats();
  const uint64_t limit = srv->owner->options().max_unsent_total;
  while (st.unsent_bytes.load(std::memory_order_relaxed) > limit) {
    Conn* victim = stalest(srv);
    if (!asked)
      if (HttpServer::Impl* o = older_loop(srv, victim ? victim->sock.last_written : UINT64_MAX)) {
        uv_async_send(&o->over_asked);
        return;
      }
    if (!victim) return;
    srv->close(victim, HttpClose::UnsentTotal);
    asked = false;
  }
}

void on_over_total(uv_check_t* h) {
  auto* srv = static_cast<HttpServer::Impl*>(h->data);
  uv_check_stop(h);
  srv->checking = false;
  close_stalest(srv, false);
}

void on_over_asked(uv_async_t* a) { close_stalest(static_cast<HttpServer::Impl*>(a->data), true); }

}  // namespace

void HttpServer::Impl::account(Conn* c) {
  const size_t now = c->sock.closed() ? 0 : c->out.size();
  if (now == c->counted) return;
  HttpStats& st = owner->stats();
  // Unsigned wrap-around: adding (now - counted) modulo 2^64 subtracts when it shrank.
  const uint64_t total = st.unsent_bytes.fetch_add(static_cast<uint64_t>(now) - c->counted, std::memory_order_relaxed) +
                         (static_cast<uint64_t>(now) - c->counted);
  c->counted = now;
  if (total > owner->options().max_unsent_total && !checking) {
    checking = true;
    uv_check_start(&over_total, on_over_total);
  }
}

void HttpServer::Impl::close(Conn* c, HttpClose why) {
  count_close(owner->stats(), why);
  c->sock.close();
  account(c);
}

void HttpServer::Impl::on_closed(net::Conn& s) {
  Conn* c = static_cast<Conn*>(s.owner);
  account(c);
  net::list_remove(conns, c, &Conn::slot);
  owner->connections_dec();
  delete c;
}

void HttpServer::Impl::on_written(net::Conn& s, int status, size_t bytes) {
  Conn* c = static_cast<Conn*>(s.owner);
  c->out.consume(bytes);
  if (s.closed()) return;
  if (status < 0) {
    s.close();
    account(c);
    return;
  }
  const uint64_t now = uv_now(&loop);
  const bool sent = send(c, now);
  if (sent) grow_if_quick(c, owner->options().sndbuf, now);
  account(c);
  if (!sent || s.state() == net::ConnState::Draining) return;  // closes once nothing is written
  if (c->takeover && c->unsent() == 0) {
    hand_over(c);
    return;
  }
  if (c->takeover || c->unsent() > owner->options().max_unsent / 2) return;
  // Below half the bound again: the requests that waited unread are
  // answered, then reading goes on.
  s.resume();
  if (!c->sock.in.empty() && !c->last) process(c);
}

namespace {

// A request refused before it had a route (malformed, too large): its
// access line names the TCP peer, no key and no path.
void log_refused(const Conn* c, int status, size_t bytes) {
  if (!access_log::log().on()) return;
  const std::string client = format_ip(c->peer.ip);
  access_log::Request line;
  line.client = client;
  line.status = status;
  line.bytes = bytes;
  access_log::request(line, wall_ms());
}

// One request through the handler. No request may end the process: an
// exception drops what the handler queued and answers 500 instead; the
// connection then closes after that answer. False in that case.
bool answer(HttpServer::Impl* srv, Conn* c, const http::Request& req) {
  const net::OutQueue::Mark mark = c->out.mark();
  try {
    srv->owner->handler().handle(req, c->peer, c->out, c->takeover);
    count_response(req.path, c->out.head_since(mark), c->takeover != nullptr);
    return true;
  } catch (...) {
    c->out.truncate(mark);
    c->takeover = nullptr;
    srv->owner->count_internal_error();
    srv->owner->handler().refuse(500, err::kInternal, c->out.tail());
    count_response(req.path, c->out.head_since(mark), false);
    return false;
  }
}

// A PROXY line before the first request (rest/proxy_protocol.h): taken
// off from a trusted proxy, refused (400, then closed) from anyone else.
// False while more bytes are needed, or once refused.
bool take_proxy_line(HttpServer::Impl* srv, Conn* c) {
  const char* why = "";
  ProxyStep step = take_proxy_line(c->sock.in, c->peer.ip, srv->owner->options().trusted_proxies, why);
  if (step == ProxyStep::NeedMore) return false;
  c->proxy_checked = true;
  if (step == ProxyStep::Refused) {
    const net::OutQueue::Mark mark = c->out.mark();
    srv->owner->handler().refuse(400, why, c->out.tail());
    count_refused(400);
    log_refused(c, 400, c->out.bytes_since(mark));
    c->sock.in.clear();
    c->last = true;
    if (send(c, uv_now(&srv->loop))) c->sock.drain();
    srv->account(c);
    return false;
  }
  return true;
}

}  // namespace

void HttpServer::Impl::on_read(net::Conn& s, char* p, size_t n) {
  Conn* c = static_cast<Conn*>(s.owner);
  if (s.state() == net::ConnState::Draining || c->takeover || c->last) return;
  if (s.in.empty()) c->request_started = s.last_active;
  s.in.append(p, n);
  if (!c->proxy_checked && !take_proxy_line(this, c)) return;
  process(c);
}

// Every complete request in the buffer is answered now (pipelining), while
// the connection owes at most max_unsent: the requests past that wait
// unread, with reading paused, until the client has taken half of it. The
// answers go out in one writev.
void HttpServer::Impl::process(Conn* c) {
  net::Conn& s = c->sock;
  const uint64_t now = uv_now(&loop);
  const size_t max_unsent = owner->options().max_unsent;
  std::string& in = s.in;
  size_t used = 0;
  bool last = false;  // no request after this one: the connection closes once answered
  while (used < in.size()) {
    // Over the bound: what the socket takes now goes first; what it cannot
    // take stops the answering until the client reads.
    if (c->unsent() > max_unsent && (!send(c, uv_now(&loop)) || c->unsent() > max_unsent)) break;
    http::Request req;
    http::ParseResult r = c->parser.parse(std::string_view(in).substr(used), req);
    if (r.status == http::ParseStatus::Incomplete) {
      if (r.expect_continue && !c->continued) {
        c->out.append("HTTP/1.1 100 Continue\r\n\r\n");
        c->continued = true;
      }
      break;
    }
    c->parser.reset();
    c->continued = false;
    if (r.status == http::ParseStatus::Error) {
      const net::OutQueue::Mark mark = c->out.mark();
      owner->handler().refuse(r.error_status, r.error, c->out.tail());
      count_refused(r.error_status);
      log_refused(c, r.error_status, c->out.bytes_since(mark));
      last = true;
      used = in.size();
      break;
    }
    owner->count_request();
    requests.fetch_add(1, std::memory_order_relaxed);
    if (!answer(this, c, req) || c->peer.close_after) {
      last = true;
      used = in.size();
      break;
    }
    used += r.consumed;
    if (c->takeover) break;  // what follows belongs to the new protocol
    if (!req.keep_alive) {
      last = true;
      used = in.size();
      break;
    }
  }
  if (s.closed()) {  // a write failed
    account(c);
    return;
  }
  in.erase(0, used);
  if (!in.empty() && used > 0) c->request_started = now;  // the next request has begun
  if (in.empty()) c->request_started = 0;
  c->last = last;
  const bool sent = send(c, uv_now(&loop));
  account(c);
  if (!sent) return;
  if (c->takeover) {
    s.pause();
    c->request_started = 0;
    if (c->unsent() == 0) hand_over(c);
    return;
  }
  if (last) {
    s.drain();  // closes now if nothing is left to write
  } else if (c->unsent() > max_unsent && s.reading()) {
    s.pause();  // a client that does not read its answers stops being read
    owner->stats().read_pauses.fetch_add(1, std::memory_order_relaxed);
  }
}

namespace {

// A connection dealt to this loop: from here on it is this loop's alone.
void adopt(HttpServer::Impl* srv, int fd) {
  auto* c = new Conn;
  net::list_add(srv->conns, c, &Conn::slot);
  srv->owner->connections_inc();
  c->peer.loop = srv->index;
  c->sndbuf = srv->owner->options().sndbuf;
  if (!c->sock.open(&srv->loop, fd, *srv, srv->read_buf, c)) return;  // freed in on_closed
  c->sock.peer_ip(c->peer.ip);
}

void on_incoming(uv_async_t* a) {
  auto* srv = static_cast<HttpServer::Impl*>(a->data);
  std::vector<int> fds;
  {
    std::lock_guard<std::mutex> lock(srv->incoming_mu);
    fds.swap(srv->incoming);
  }
  for (int fd : fds) adopt(srv, fd);
}

// Loop 0: the listening socket is readable. Accepts what is pending (at
// most 64 a turn, so serving its own connections goes on) and deals each
// connection to the loops in turn.
void on_listener(uv_poll_t* p, int status, int) {
  auto* srv = static_cast<HttpServer::Impl*>(p->data);
  if (status < 0) return;
  HttpServer& owner = *srv->owner;
  for (int i = 0; i < 64; ++i) {
    int fd = ::accept4(srv->listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        uv_poll_stop(&srv->listener);  // out of descriptors: the sweep resumes accepting
        srv->accepting = false;
      }
      return;  // EAGAIN: nothing more pending; anything else: this connection is lost
    }
    HttpServer::Impl& to = owner.loop_impl(srv->next++ % owner.loop_count());
    if (&to == srv) {
      adopt(srv, fd);
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(to.incoming_mu);
      to.incoming.push_back(fd);
    }
    uv_async_send(&to.incoming_async);
  }
}

// Runs four times a second: closes connections whose request has been
// arriving for longer than the header timeout (slow-loris), keep-alive
// connections idle past the idle timeout, and clients that stopped reading.
// O(connections) per run.
void on_sweep(uv_timer_t* t) {
  auto* srv = static_cast<HttpServer::Impl*>(t->data);
  if (srv->listen_fd >= 0 && !srv->accepting) {
    srv->accepting = true;
    uv_poll_start(&srv->listener, UV_READABLE, on_listener);
  }
  const uint64_t now = uv_now(&srv->loop);
  const auto& o = srv->owner->options();
  for (Conn* c : srv->conns) {
    if (c->sock.closed()) continue;
    // Slow-loris applies only while we read: with reading paused (backpressure)
    // a half-read request in the buffer is ours to finish, not the client's.
    const bool slow = c->sock.reading() && c->request_started &&
                      now - c->request_started > static_cast<uint64_t>(o.header_timeout_ms);
    // Idle keep-alive connections, and clients that stopped reading their
    // answers (nothing read or written for the idle timeout; their unsent
    // bytes, bounded by max_unsent plus one answer, are freed with them).
    const net::Expiry e = c->sock.expired(now, static_cast<uint64_t>(o.idle_timeout_ms), c->unsent(),
                                          /*busy=*/c->request_started != 0);
    if (c->unsent() > 0) c->sock.note_progress(now);  // the kernel's progress too, for the total bound's choice
    if (slow)
      srv->close(c, HttpClose::HeaderTimeout);
    else if (e != net::Expiry::None)
      srv->close(c, e == net::Expiry::Stalled ? HttpClose::Stalled : HttpClose::Idle);
  }
  stalest(srv);  // published for the other loops' choice
  // Another loop's connections may have taken the process over the total
  // bound: this loop's stalest go too, if that loop's own could not bring
  // it under.
  if (srv->owner->stats().unsent_bytes.load(std::memory_order_relaxed) > o.max_unsent_total && !srv->checking) {
    srv->checking = true;
    uv_check_start(&srv->over_total, on_over_total);
  }
}

}  // namespace

HttpServer::HttpServer(HttpServerOptions opts, HttpHandler& handler) : opts_(std::move(opts)), handler_(handler) {}

HttpServer::~HttpServer() { stop(); }

namespace {

// The listening socket, bound and listening, non-blocking; -1 with `err`.
int listen_socket(const HttpServerOptions& o, std::string& err) {
  sockaddr_storage addr{};
  int rc = uv_ip4_addr(o.host.c_str(), o.port, reinterpret_cast<sockaddr_in*>(&addr));
  if (rc != 0) rc = uv_ip6_addr(o.host.c_str(), o.port, reinterpret_cast<sockaddr_in6*>(&addr));
  int fd = -1;
  if (rc == 0) {
    fd = ::socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    const int on = 1;
    const socklen_t len = addr.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
    if (fd < 0 || ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 ||
        ::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd, 1024) != 0)
      rc = uv_translate_sys_error(errno);
  }
  if (rc != 0) {
    err = "cannot listen on " + o.host + ":" + std::to_string(o.port) + ": " + uv_strerror(rc);
    if (fd >= 0) ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

bool HttpServer::start(std::string& err) {
  const int fd = listen_socket(opts_, err);
  if (fd < 0) return false;
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  port_ = opts_.port;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len) == 0)
    port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                              : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  const uint32_t n = std::max<uint32_t>(1, opts_.threads);
  for (uint32_t i = 0; i < n; ++i) {
    loops_.push_back(std::make_unique<Impl>());
    Impl& s = *loops_.back();
    s.owner = this;
    s.index = i;
    uv_loop_init(&s.loop);
    if (i == 0) {
      s.listen_fd = fd;
      uv_poll_init(&s.loop, &s.listener, fd);
      s.listener.data = &s;
      s.accepting = true;
      uv_poll_start(&s.listener, UV_READABLE, on_listener);
    }
    uv_async_init(&s.loop, &s.incoming_async, on_incoming);
    s.incoming_async.data = &s;
    uv_async_init(&s.loop, &s.stop_async, [](uv_async_t* a) {
      auto* s = static_cast<Impl*>(a->data);
      if (s->listen_fd >= 0) uv_close(reinterpret_cast<uv_handle_t*>(&s->listener), nullptr);
      uv_close(reinterpret_cast<uv_handle_t*>(&s->sweep), nullptr);
      uv_close(reinterpret_cast<uv_handle_t*>(&s->over_total), nullptr);
      s->stopping.store(true, std::memory_order_release);
      uv_close(reinterpret_cast<uv_handle_t*>(&s->over_asked), nullptr);
      uv_close(reinterpret_cast<uv_handle_t*>(&s->stop_async), nullptr);
      uv_close(reinterpret_cast<uv_handle_t*>(&s->incoming_async), nullptr);
      for (Conn* c : s->conns) c->sock.close();
    });
    s.stop_async.data = &s;
    uv_timer_init(&s.loop, &s.sweep);
    s.sweep.data = &s;
    uv_timer_start(&s.sweep, on_sweep, 250, 250);
    uv_check_init(&s.loop, &s.over_total);
    s.over_total.data = &s;
    uv_async_init(&s.loop, &s.over_asked, on_over_asked);
    s.over_asked.data = &s;
  }
  for (size_t i = 0; i < loops_.size(); ++i)
    threads_.push_back(named_thread("rest-" + std::to_string(i), [s = loops_[i].get()] {
      uv_run(&s->loop, UV_RUN_DEFAULT);  // returns once every handle is closed
    }));
  return true;
}

std::vector<uint64_t> HttpServer::loop_requests() const {
  std::vector<uint64_t> out;
  for (const auto& l : loops_) out.push_back(l->requests.load(std::memory_order_relaxed));
  return out;
}

void HttpServer::stop() {
  if (threads_.empty()) return;
  // Loop 0 first: once it has stopped, nothing deals sockets to the others,
  // whose wake-up handles then close.
  uv_async_send(&loops_[0]->stop_async);
  threads_[0].join();
  for (size_t i = 1; i < loops_.size(); ++i) uv_async_send(&loops_[i]->stop_async);
  for (size_t i = 1; i < threads_.size(); ++i) threads_[i].join();
  threads_.clear();
  for (auto& l : loops_) {
    uv_loop_close(&l->loop);
    for (int fd : l->incoming) ::close(fd);  // dealt after that loop stopped
    if (l->listen_fd >= 0) ::close(l->listen_fd);
  }
  loops_.clear();
}

}  // namespace oddsrelay::rest
