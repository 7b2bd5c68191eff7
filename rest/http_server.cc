#include "rest/http_server.h"

#include <unistd.h>

#include <cstring>
#include <list>

#include <uv.h>

#include "rest/errors.h"
#include "rest/request_metrics.h"
#include "rest/proxy_protocol.h"

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
  uint64_t request_started = 0;     // loop ms when the pending request's first byte came; 0 = none
  uint64_t last_active = 0;         // loop ms of the last read or completed write
  size_t unsent = 0;                // bytes handed to uv_write not yet written
  bool reading = true;
  bool close_after_write = false;
  bool closing = false;
  bool proxy_checked = false;       // the connection's first bytes were looked at for a PROXY line
  Takeover takeover;                // set: hand the socket over once unsent == 0
};

struct WriteReq {
  uv_write_t req;
  std::string data;
  Conn* conn;
};

}  // namespace

struct HttpServer::Impl {
  HttpServer* owner = nullptr;
  uv_loop_t loop;
  uv_tcp_t listener;
  uv_async_t stop_async;
  uv_timer_t sweep;
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
    uv_read_start(reinterpret_cast<uv_stream_t*>(&c->tcp),
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
    srv->owner->handler().refuse(400, why, srv->out);
    count_refused(400);
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
      srv->owner->handler().refuse(r.error_status, r.error, out);
      count_refused(r.error_status);
      c->close_after_write = true;
      used = c->in.size();
      break;
    }
    srv->owner->count_request();
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

void on_connection(uv_stream_t* server, int status) {
  auto* srv = static_cast<HttpServer::Impl*>(server->data);
  if (status < 0) return;
  auto* c = new Conn;
  c->server = srv;
  uv_tcp_init(&srv->loop, &c->tcp);
  c->tcp.data = c;
  srv->conns.push_front(c);
  c->self = srv->conns.begin();
  srv->owner->connections_inc();
  if (uv_accept(server, reinterpret_cast<uv_stream_t*>(&c->tcp)) != 0) {
    conn_close(c);
    return;
  }
  uv_tcp_nodelay(&c->tcp, 1);
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
  uv_read_start(reinterpret_cast<uv_stream_t*>(&c->tcp),
                [](uv_handle_t* h, size_t, uv_buf_t* b) {
                  auto* c = static_cast<Conn*>(h->data);
                  *b = uv_buf_init(c->server->read_buf, sizeof c->server->read_buf);
                },
                on_read);
}

// Runs four times a second: closes connections whose request has been
// arriving for longer than the header timeout (slow-loris), keep-alive
// connections idle past the idle timeout, and clients that stopped reading.
// O(connections) per run.
void on_sweep(uv_timer_t* t) {
  auto* srv = static_cast<HttpServer::Impl*>(t->data);
  const uint64_t now = uv_now(&srv->loop);
  const auto& o = srv->owner->options();
  for (Conn* c : srv->conns) {
    if (c->closing) continue;
    const uint64_t quiet = now - c->last_active;  // since the last read or completed write
    // Slow-loris applies only while we read: with reading paused (backpressure)
    // a half-read request in the buffer is ours to finish, not the client's.
    bool slow = c->reading && c->request_started && now - c->request_started > static_cast<uint64_t>(o.header_timeout_ms);
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

bool HttpServer::start(std::string& err) {
  impl_ = std::make_unique<Impl>();
  Impl& s = *impl_;
  s.owner = this;
  uv_loop_init(&s.loop);
  uv_tcp_init(&s.loop, &s.listener);
  s.listener.data = &s;
  sockaddr_storage addr{};
  int rc = uv_ip4_addr(opts_.host.c_str(), opts_.port, reinterpret_cast<sockaddr_in*>(&addr));
  if (rc != 0) rc = uv_ip6_addr(opts_.host.c_str(), opts_.port, reinterpret_cast<sockaddr_in6*>(&addr));
  if (rc == 0) rc = uv_tcp_bind(&s.listener, reinterpret_cast<sockaddr*>(&addr), 0);
  if (rc == 0) rc = uv_listen(reinterpret_cast<uv_stream_t*>(&s.listener), 1024, on_connection);
  if (rc != 0) {
    err = "cannot listen on " + opts_.host + ":" + std::to_string(opts_.port) + ": " + uv_strerror(rc);
    uv_close(reinterpret_cast<uv_handle_t*>(&s.listener), nullptr);
    uv_run(&s.loop, UV_RUN_DEFAULT);
    uv_loop_close(&s.loop);
    impl_.reset();
    return false;
  }
  sockaddr_storage bound{};
  int len = sizeof bound;
  port_ = opts_.port;
  if (uv_tcp_getsockname(&s.listener, reinterpret_cast<sockaddr*>(&bound), &len) == 0)
    port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                              : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  uv_async_init(&s.loop, &s.stop_async, [](uv_async_t* a) {
    auto* s = static_cast<Impl*>(a->data);
    uv_close(reinterpret_cast<uv_handle_t*>(&s->listener), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&s->sweep), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&s->stop_async), nullptr);
    for (Conn* c : s->conns) conn_close(c);
  });
  s.stop_async.data = &s;
  uv_timer_init(&s.loop, &s.sweep);
  s.sweep.data = &s;
  uv_timer_start(&s.sweep, on_sweep, 250, 250);
  thread_ = std::thread([this] {
    uv_run(&impl_->loop, UV_RUN_DEFAULT);  // returns once every handle is closed
  });
  return true;
}

void HttpServer::stop() {
  if (!thread_.joinable()) return;
  uv_async_send(&impl_->stop_async);
  thread_.join();
  uv_loop_close(&impl_->loop);
  impl_.reset();
}

}  // namespace oddsrelay::rest
