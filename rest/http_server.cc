#include "rest/http_server.h"

#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <list>
#include <mutex>
#include <vector>

#include "protocol/api/access_log.h"
#include "protocol/api/errors.h"
#include "protocol/clock.h"
#include "rest/client_address.h"
#include "rest/proxy_protocol.h"
#include "rest/request_metrics.h"

namespace oddsrelay::rest {

namespace {

struct Conn;

// One connection; owned by the loop thread, freed in its close callback.
struct Conn {
  uv_tcp_t tcp;
  HttpServer::Impl* server = nullptr;
  std::list<Conn*>::iterator self;  // position in Impl::conns
  std::string in;                   // received, not yet consumed
  http::RequestParser parser;
  Peer peer;
  uint64_t request_started = 0;  // loop ms when the pending request's first byte came; 0 = none
  uint64_t last_active = 0;      // loop ms of the last read or completed write
  size_t unsent = 0;             // bytes handed to uv_write not yet written
  bool reading = true;
  bool close_after_write = false;
  bool closing = false;
  bool proxy_checked = false;  // the connection's first bytes were looked at for a PROXY line
  Takeover takeover;           // set: hand the socket over once unsent == 0
};

struct WriteReq {
  uv_write_t req;
  std::string data;
  Conn* conn;
};

}  // namespace

struct HttpServer::Impl {
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
  std::mutex incoming_mu;
  std::vector<int> incoming;  // accepted by loop 0 for this loop
  std::list<Conn*> conns;
  char read_buf[64 * 1024];
  std::string out;  // responses of the current read, batched into one write
};

namespace {

void conn_close(Conn* c) {
  if (c->closing) return;
  c->closing = true;
  uv_close(reinterpret_cast<uv_handle_t*>(&c->tcp), [](uv_handle_t* h) {
    Conn* c = static_cast<Conn*>(h->data);
    c->server->conns.erase(c->self);
    c->server->owner->connections_dec();
    delete c;
  });
}

void on_read(uv_stream_t* s, ssize_t nread, const uv_buf_t* buf);

// Detaches the socket: a duplicate descriptor goes to the new owner, our
// handle closes (the socket lives on through the duplicate). A failed dup
// just closes the connection.
void hand_over(Conn* c) {
  Takeover t = std::move(c->takeover);
  c->takeover = nullptr;
  uv_os_fd_t fd = -1;
  int dup_fd = uv_fileno(reinterpret_cast<uv_handle_t*>(&c->tcp), &fd) == 0 ? ::dup(fd) : -1;
  std::string pending = std::move(c->in);
  conn_close(c);
  if (dup_fd >= 0) t(dup_fd, std::move(pending));
}

void on_write(uv_write_t* req, int status) {
  auto* w = static_cast<WriteReq*>(req->data);
  Conn* c = w->conn;
  c->unsent -= w->data.size();
  c->last_active = uv_now(&c->server->loop);
  delete w;
  if (c->closing) return;
  if (status < 0 || (c->close_after_write && c->unsent == 0)) {
    conn_close(c);
    return;
  }
  if (c->takeover && c->unsent == 0) {
    hand_over(c);
    return;
  }
  if (!c->reading && c->unsent <= c->server->owner->options().max_unsent / 2) {
    c->reading = true;
    uv_read_start(
        reinterpret_cast<uv_stream_t*>(&c->tcp),
        [](uv_handle_t* h, size_t, uv_buf_t* b) {
          auto* c = static_cast<Conn*>(h->data);
          *b = uv_buf_init(c->server->read_buf, sizeof c->server->read_buf);
        },
        on_read);
  }
}

void flush(Conn* c, std::string& out) {
  if (out.empty()) return;
  auto* w = new WriteReq;
  w->data.swap(out);
  w->conn = c;
  w->req.data = w;
  c->unsent += w->data.size();
  uv_buf_t b = uv_buf_init(w->data.data(), static_cast<unsigned>(w->data.size()));
  if (uv_write(&w->req, reinterpret_cast<uv_stream_t*>(&c->tcp), &b, 1, on_write) != 0) {
    c->unsent -= w->data.size();
    delete w;
    conn_close(c);
  }
}

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
// exception drops what the handler appended and answers 500 instead; the
// connection then closes after that answer. False in that case.
bool answer(HttpServer::Impl* srv, Conn* c, const http::Request& req, std::string& out) {
  const size_t mark = out.size();
  try {
    srv->owner->handler().handle(req, c->peer, out, c->takeover);
    count_response(req.path, std::string_view(out).substr(mark), c->takeover != nullptr);
    return true;
  } catch (...) {
    out.resize(mark);
    c->takeover = nullptr;
    srv->owner->count_internal_error();
    srv->owner->handler().refuse(500, err::kInternal, out);
    count_response(req.path, std::string_view(out).substr(mark), false);
    c->close_after_write = true;
    return false;
  }
}

// A PROXY line before the first request (rest/proxy_protocol.h): taken
// off from a trusted proxy, refused (400, then closed) from anyone else.
// False while more bytes are needed.
bool take_proxy_line(HttpServer::Impl* srv, Conn* c) {
  const char* why = "";
  ProxyStep step = take_proxy_line(c->in, c->peer.ip, srv->owner->options().trusted_proxies, why);
  if (step == ProxyStep::NeedMore) return false;
  c->proxy_checked = true;
  if (step == ProxyStep::Refused) {
    const size_t mark = srv->out.size();
    srv->owner->handler().refuse(400, why, srv->out);
    count_refused(400);
    log_refused(c, 400, srv->out.size() - mark);
    c->close_after_write = true;
    c->in.clear();
  }
  return true;
}

void on_read(uv_stream_t* s, ssize_t nread, const uv_buf_t* buf) {
  Conn* c = static_cast<Conn*>(s->data);
  if (nread < 0) {
    conn_close(c);
    return;
  }
  if (nread == 0 || c->close_after_write || c->takeover) return;
  HttpServer::Impl* srv = c->server;
  const uint64_t now = uv_now(&srv->loop);
  c->last_active = now;
  if (c->in.empty()) c->request_started = now;
  c->in.append(buf->base, static_cast<size_t>(nread));
  if (!c->proxy_checked && !take_proxy_line(srv, c)) return;

  // Every complete request in the buffer is answered now (pipelining); the
  // answers go out in one write.
  std::string& out = srv->out;
  size_t used = 0;
  while (used < c->in.size()) {
    http::Request req;
    http::ParseResult r = c->parser.parse(std::string_view(c->in).substr(used), req);
    if (r.status == http::ParseStatus::Incomplete) break;
    c->parser.reset();
    if (r.status == http::ParseStatus::Error) {
      const size_t mark = out.size();
      srv->owner->handler().refuse(r.error_status, r.error, out);
      count_refused(r.error_status);
      log_refused(c, r.error_status, out.size() - mark);
      c->close_after_write = true;
      used = c->in.size();
      break;
    }
    srv->owner->count_request();
    srv->requests.fetch_add(1, std::memory_order_relaxed);
    if (!answer(srv, c, req, out)) {
      used = c->in.size();
      break;
    }
    used += r.consumed;
    if (c->takeover) break;  // what follows belongs to the new protocol
    if (!req.keep_alive) {
      c->close_after_write = true;
      used = c->in.size();
      break;
    }
  }
  c->in.erase(0, used);
  if (!c->in.empty() && used > 0) c->request_started = now;  // the next request has begun
  if (c->in.empty()) c->request_started = 0;
  flush(c, out);
  if (c->closing) return;
  if (c->takeover) {
    uv_read_stop(s);
    c->reading = false;
    c->request_started = 0;
    if (c->unsent == 0) hand_over(c);
    return;
  }
  if (c->close_after_write) {
    uv_read_stop(s);
    c->reading = false;
    if (c->unsent == 0) conn_close(c);
  } else if (c->unsent > srv->owner->options().max_unsent) {
    uv_read_stop(s);  // a client that does not read its answers stops being read
    c->reading = false;
  }
}

// A connection dealt to this loop: from here on it is this loop's alone.
void adopt(HttpServer::Impl* srv, int fd) {
  auto* c = new Conn;
  c->server = srv;
  uv_tcp_init(&srv->loop, &c->tcp);
  c->tcp.data = c;
  srv->conns.push_front(c);
  c->self = srv->conns.begin();
  srv->owner->connections_inc();
  if (uv_tcp_open(&c->tcp, fd) != 0) {
    ::close(fd);
    conn_close(c);
    return;
  }
  uv_tcp_nodelay(&c->tcp, 1);
  c->peer.loop = srv->index;
  sockaddr_storage ss{};
  int len = sizeof ss;
  if (uv_tcp_getpeername(&c->tcp, reinterpret_cast<sockaddr*>(&ss), &len) == 0) {
    if (ss.ss_family == AF_INET) {
      c->peer.ip[10] = c->peer.ip[11] = 0xff;
      std::memcpy(c->peer.ip.data() + 12, &reinterpret_cast<sockaddr_in*>(&ss)->sin_addr, 4);
    } else if (ss.ss_family == AF_INET6) {
      std::memcpy(c->peer.ip.data(), &reinterpret_cast<sockaddr_in6*>(&ss)->sin6_addr, 16);
    }
  }
  c->last_active = uv_now(&srv->loop);
  uv_read_start(
      reinterpret_cast<uv_stream_t*>(&c->tcp),
      [](uv_handle_t* h, size_t, uv_buf_t* b) {
        auto* c = static_cast<Conn*>(h->data);
        *b = uv_buf_init(c->server->read_buf, sizeof c->server->read_buf);
      },
      on_read);
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
    if (c->closing) continue;
    const uint64_t quiet = now - c->last_active;  // since the last read or completed write
    // Slow-loris applies only while we read: with reading paused (backpressure)
    // a half-read request in the buffer is ours to finish, not the client's.
    bool slow =
        c->reading && c->request_started && now - c->request_started > static_cast<uint64_t>(o.header_timeout_ms);
    bool idle = !c->request_started && c->unsent == 0 && quiet > static_cast<uint64_t>(o.idle_timeout_ms);
    // A client that stopped reading its answers: no write has completed for
    // the idle timeout. Its unsent bytes (bounded by max_unsent plus one
    // batch) are freed with it.
    bool stalled = c->unsent > 0 && quiet > static_cast<uint64_t>(o.idle_timeout_ms);
    if (slow || idle || stalled) conn_close(c);
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
      uv_close(reinterpret_cast<uv_handle_t*>(&s->stop_async), nullptr);
      uv_close(reinterpret_cast<uv_handle_t*>(&s->incoming_async), nullptr);
      for (Conn* c : s->conns) conn_close(c);
    });
    s.stop_async.data = &s;
    uv_timer_init(&s.loop, &s.sweep);
    s.sweep.data = &s;
    uv_timer_start(&s.sweep, on_sweep, 250, 250);
  }
  for (auto& l : loops_)
    threads_.emplace_back([s = l.get()] {
      uv_run(&s->loop, UV_RUN_DEFAULT);  // returns once every handle is closed
    });
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
