// The connection layer under both outputs (rest/http_server.cc's HTTP
// connections, relay/stream_conn.h's streams): one TCP socket on a libuv
// loop, where it stands in its life as one state, the loop's one read
// buffer, a write path that puts into the socket what it takes now
// (uv_try_write) and hands only the rest to uv_write, the bytes still
// owed, and the stamps the loop's periodic sweep judges idle and stalled
// connections by. Like Redis's client or h2o's socket: the protocols sit
// on it and own their framing; it owns the socket. Loop thread only.
#pragma once

#include <uv.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace oddsrelay::net {

// Where received bytes land: one per loop, shared by its connections (a
// protocol copies what it does not consume into Conn::in).
struct ReadBuffer {
  char bytes[64 * 1024];
};

class Conn;
class TurnWriter;

// The owner's side (a loop): called on the loop thread. A connection is
// freed by its owner in on_closed only; until then it stays valid, closed
// or not.
class ConnHandler {
 public:
  virtual void on_read(Conn& c, char* p, size_t n) = 0;  // p: the read buffer, the protocol may change it in place
  virtual void on_read_error(Conn& c) = 0;               // end of stream or an error: the peer is gone
  // The uv_write in flight completed (status < 0: failed; the owner closes)
  // after carrying `bytes`. A Draining connection with nothing left to
  // write closes right after.
  virtual void on_written(Conn& c, int status, size_t bytes) = 0;
  virtual void on_closed(Conn& c) = 0;  // the handle is closed: the owner may free c

 protected:
  ~ConnHandler() = default;
};

// A connection's life, in order; it only moves forward (but for Open and
// Paused, which alternate).
enum class ConnState : uint8_t {
  Idle,      // not opened yet (or no socket: a test's connection)
  Open,      // reading and writing
  Paused,    // not reading (backpressure, or not the protocol's turn); writes go on
  Draining,  // not reading; closed once the write in flight is done
  Closed,    // uv_close called; on_closed comes in its callback
};

// The sweep's verdict on a connection (see expired()).
enum class Expiry : uint8_t { None, Idle, Stalled };

class Conn {
 public:
  Conn() = default;
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  // Takes over a connected socket (TCP_NODELAY on) and starts reading into
  // `rb`. False on failure: the descriptor is closed, so is the connection
  // (on_closed follows).
  bool open(uv_loop_t* loop, int fd, ConnHandler& h, ReadBuffer& rb, void* owner, bool read = true);

  void pause();   // Open -> Paused
  void resume();  // Paused (or opened without reading) -> Open
  void drain();   // -> Draining; closes at once when nothing is being written
  void close();   // -> Closed (once); on_closed comes from the loop (not for a never opened one)
  // TCP keepalive: a peer that vanished without a FIN leaves the kernel's tables.
  void keepalive(unsigned secs) { uv_tcp_keepalive(&tcp_, 1, secs); }
  // SO_SNDBUF (the kernel doubles it; autotuning is off from then on).
  void send_buffer(int bytes) {
    int b = bytes;
    uv_send_buffer_size(reinterpret_cast<uv_handle_t*>(&tcp_), &b);
  }

  // Sends `n` buffers: what the socket takes now, the rest with one
  // uv_write, whose bytes must stay valid until on_written. Only when
  // !writing(). Returns the bytes the socket took at once (all of them: no
  // on_written comes), or < 0 on an error (nothing in flight; the owner
  // closes). May adjust `bufs`.
  ssize_t write(uv_buf_t* bufs, unsigned n);
  // The same write after the socket took `took` of its bytes elsewhere (a
  // TurnWriter's send): the rest, if any, goes with one uv_write, exactly as
  // after a partial uv_try_write. Returns `took`, or < 0 on an error.
  ssize_t write_rest(uv_buf_t* bufs, unsigned n, size_t took);
  // A TurnWriter's result for this connection's write of `bufs`: the bytes
  // the socket took (-EAGAIN: none, it was full), the rest by write_rest's
  // uv_write, which waits for the socket to be writable. Returns the bytes
  // taken, or < 0 on an error (nothing in flight; the owner closes).
  ssize_t sent(uv_buf_t* bufs, unsigned n, ssize_t result);
  // A TurnWriter holds a send of this connection's not yet reported.
  bool queued() const { return queued_in_ != nullptr; }
  int fd() const;
  bool writing() const { return unsent_ > 0; }
  size_t unsent() const { return unsent_; }  // bytes of the write in flight libuv still owes

  // The sweep's write progress check: the socket's bytes leave slowly (the
  // kernel wakes libuv only once much of a large send buffer is free), so
  // libuv's write queue or the kernel's unsent bytes (SIOCOUTQ) going down
  // since the last check count as progress too.
  void note_progress(uint64_t now);
  // Past `limit` ms with nothing heard or written and nothing owed (and the
  // owner not `busy` with a request): Idle; bytes owed (`owed`: the
  // protocol's, this write's included) and no read or write progress for
  // `limit` ms: Stalled.
  Expiry expired(uint64_t now, uint64_t limit, size_t owed, bool busy) const;

  ConnState state() const { return state_; }
  bool reading() const { return state_ == ConnState::Open; }
  bool closed() const { return state_ == ConnState::Closed; }
  uv_loop_t* loop() const { return tcp_.loop; }
  uint64_t now() const { return uv_now(tcp_.loop); }
  // A duplicate of the socket's descriptor (for another loop to take the
  // connection over), or -1.
  int dup_fd() const;
  // The peer's address, v4 as v4-mapped v6; false if unknown.
  bool peer_ip(std::array<uint8_t, 16>& ip) const;

  void* owner = nullptr;      // the protocol's connection
  std::string in;             // received, not yet consumed by the protocol
  uint64_t last_active = 0;   // loop ms: the last read or write progress
  uint64_t last_written = 0;  // loop ms: the last write progress (or the owner's "nothing waiting")

 private:
  friend struct ConnCallbacks;
  friend class TurnWriter;
  uv_tcp_t tcp_{};
  uv_write_t wreq_{};
  ConnHandler* handler_ = nullptr;
  ReadBuffer* rb_ = nullptr;
  ConnState state_ = ConnState::Idle;
  size_t unsent_ = 0;
  TurnWriter* queued_in_ = nullptr;  // close() issues its send first: the descriptor must still name this socket
  size_t write_queue_seen_ = 0, kernel_unsent_seen_ = 0;  // at the last note_progress
};

}  // namespace oddsrelay::net
