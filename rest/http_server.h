// The HTTP/1.1 listener: N libuv loops, each on its own thread (--http-threads;
// one listening socket, whose connections loop 0 accepts and deals out in
// turn, so no other process can join the port and every loop gets its
// share), keep-alive and pipelining, responses of one read batched into one
// writev, bounded input (protocol/http_request.h) and output: each
// connection's answers wait in a queue of pieces (protocol/net/out_queue.h)
// where a cached answer is a reference, not a copy; a connection that owes
// more than max_unsent is not read (its pipelined requests wait unread) and,
// past max_unsent_total for the whole process, the connection that has
// gone longest without write progress is closed first (after the loop
// turn, like Redis's freeClientAsync). Timeouts close slow-loris and idle
// connections without ever holding up other clients.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "protocol/http_request.h"
#include "protocol/net/out_queue.h"
#include "rest/http_stats.h"

namespace oddsrelay::rest {

// Where a connection comes from: the TCP peer, or the client a trusted
// proxy's PROXY line names (rest/proxy_protocol.h).
// The handler may leave state on it for the connection's life.
struct Peer {
  std::array<uint8_t, 16> ip{};  // v4 as v4-mapped v6
  uint32_t loop = 0;             // the REST loop serving the connection (0..threads-1)
  // The connection's slot under a connection limit (rest/conn_limits.h):
  // whose it is, and the hold that gives it back when the connection is
  // freed (or takes another).
  uint64_t slot_id = 0;
  uint8_t slot_kind = 0;  // 0: none
  std::shared_ptr<void> slot;
  bool close_after = false;  // set by the handler: the connection closes once this answer is written
};

class TrustedProxies;  // rest/client_address.h

// A request that switches protocols (the WebSocket upgrade). Once every
// earlier response on the connection is written, the server stops reading,
// detaches the socket and calls this with a duplicate of its descriptor
// (the callee owns it) and the bytes already received past the request.
using Takeover = std::function<void(int fd, std::string pending)>;

// Called on the connection's loop thread for each complete request (with
// several loops, concurrently: the handler keeps per-loop state by
// Peer::loop and shares the rest safely); queues the whole response
// (status line to body) on `out`, the connection's unsent bytes (owned
// bytes, or a reference to a shared body: no copy), or sets `takeover` and
// queues nothing to hand the connection to another owner. A handler that throws
// costs only its request: the server drops what it appended, answers
// refuse(500, "Internal server error"), counts it and closes that
// connection after the answer (its state is not trusted); the loop goes on.
class HttpHandler {
 public:
  virtual ~HttpHandler() = default;
  virtual void handle(const http::Request& req, Peer& peer, net::OutQueue& out, Takeover& takeover) = 0;
  // A request the parser refused: status and reason.
  virtual void refuse(int status, const char* why, std::string& out) = 0;
};

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;
  int header_timeout_ms = 10'000;             // a request must be complete this long after its first byte
  int idle_timeout_ms = 60'000;               // keep-alive connections idle this long are closed
  size_t max_unsent = 4 << 20;                // pause reading a client past this many unsent bytes
  size_t max_unsent_total = size_t{1} << 30;  // all connections: past it the stalest is closed
  // SO_SNDBUF of each connection (the kernel doubles it); 0: the kernel's
  // autotuning, which on loopback starts a socket at megabytes: what a
  // slow reader parks in the kernel, and what the loop copies there in one
  // write while other clients wait (--http-sndbuf).
  size_t sndbuf = 0;
  uint32_t threads = 1;                             // REST loops, each on its own thread (at least 1)
  const TrustedProxies* trusted_proxies = nullptr;  // peers whose PROXY line is taken; null: none
};

class HttpServer {
 public:
  HttpServer(HttpServerOptions opts, HttpHandler& handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens on the calling thread (so errors are reported), then
  // runs each loop on its own thread. False with `err` set on failure.
  bool start(std::string& err);
  void stop();  // any thread; closes every connection and joins

  uint16_t port() const { return port_; }  // the port bound (the one asked for, or the kernel's pick for 0)
  uint64_t connections() const { return connections_.load(std::memory_order_relaxed); }
  uint64_t requests() const { return requests_.load(std::memory_order_relaxed); }
  uint64_t internal_errors() const { return internal_errors_.load(std::memory_order_relaxed); }
  // Requests each loop has answered, by loop index; any thread.
  std::vector<uint64_t> loop_requests() const;
  // Unsent bytes, closes by reason, limit refusals; any thread (the
  // handler counts its refusals here too).
  HttpStats& stats() const { return stats_; }

  struct Impl;  // one loop's libuv state, that loop's thread only
  // For the loop's callbacks.
  HttpHandler& handler() { return handler_; }
  const HttpServerOptions& options() const { return opts_; }
  void connections_inc() { connections_.fetch_add(1, std::memory_order_relaxed); }
  void connections_dec() { connections_.fetch_sub(1, std::memory_order_relaxed); }
  void count_request() { requests_.fetch_add(1, std::memory_order_relaxed); }
  void count_internal_error() { internal_errors_.fetch_add(1, std::memory_order_relaxed); }
  size_t loop_count() const { return loops_.size(); }
  Impl& loop_impl(size_t i) { return *loops_[i]; }

 private:
  HttpServerOptions opts_;
  HttpHandler& handler_;
  std::vector<std::unique_ptr<Impl>> loops_;
  std::vector<std::thread> threads_;
  uint16_t port_ = 0;
  std::atomic<uint64_t> connections_{0}, requests_{0}, internal_errors_{0};
  mutable HttpStats stats_;  // counters only: counting is not a change of the server
};

}  // namespace oddsrelay::rest
