// One relay loop (relay_server.h runs N of them, each on its own thread):
// it owns its streams' sockets and writes. Upgraded sockets arrive from the
// REST listener (adoptions), encoded batches from the hub (batches); both
// through lock-free queues and a loop wake (protocol/net/loop_wake.h).
// Each batch's shared frames are wrapped once for this loop (one
// cross-thread reference per frame), handed to the protocol modules
// (pt_stream.h, ws_stream.h; a connection reaches its own through
// stream_module.h), and each connection then gets one write per loop turn.
#pragma once

#include <concurrentqueue/concurrentqueue.h>
#include <uv.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/api/key_slots.h"
#include "protocol/net/loop_timer_us.h"
#include "protocol/net/loop_wake.h"
#include "protocol/net/turn_writer.h"
#include "relay/close_reason.h"
#include "relay/hub.h"
#include "relay/outbox.h"
#include "relay/pt_stream.h"
#include "relay/write_pace.h"
#include "relay/ws_stream.h"

namespace oddsrelay::relay {

class RelayLoop : private net::ConnHandler {
 public:
  RelayLoop(const RelayOptions& opts, SnapshotPtr start, RelayStats& stats, api::KeySlots& slots, bool publishes_window,
            const std::atomic<uint64_t>* hub_seq = nullptr);
  ~RelayLoop();

  void run();           // the loop thread
  void request_stop();  // any thread
  void wake() { wake_.send(); }

  struct Adoption {
    api::StreamTicket ticket;
    int fd = -1;
    std::string pending;
  };
  moodycamel::ConcurrentQueue<SharedBatchPtr> batches;
  moodycamel::ConcurrentQueue<Adoption> adoptions;
  // Streams handed to this loop and not yet dropped: RelayServer adopts
  // into the least loaded loop.
  std::atomic<uint32_t> load{0};

  // Connection I/O: what a client sent (the protocol's framing).
  void on_readable(StreamConn* c, char* p, size_t n);
  // Queues our close frame (instead of what is queued; after it for a
  // KeyLimit refusal) and stops sending anything else; the key slot is free
  // from now on. Counts the reason. `text` and `code` (unless 0) replace
  // the table's: a detail, the parser's or the client's code.
  void close_with(StreamConn* c, CloseReason why, std::optional<std::string_view> text = {}, uint16_t code = 0);

  // The parser's handler interface (ws_frame.h), per connection.
  void on_message(StreamConn* c, ws::Opcode op, std::string_view payload);
  void on_ping(StreamConn* c, std::string_view payload);
  void on_pong(StreamConn* c);
  void on_close(StreamConn* c, uint16_t code);
  void on_error(StreamConn* c, uint16_t code, const char* reason);

 private:
  // The sockets' side (net::ConnHandler).
  void on_read(net::Conn& s, char* p, size_t n) override;
  void on_read_error(net::Conn& s) override;
  void on_written(net::Conn& s, int status, size_t bytes) override;
  void on_closed(net::Conn& s) override;
  uint64_t now() { return ctx_.now = uv_now(&loop_); }
  void drain();   // the async callback: adoptions, batches, then one write per dirty connection
  void intake();  // batches, then parked streams: what a pass writes
  void pass();    // one write per dirty connection, timed for the pace
  void adopt(Adoption& a);
  size_t take_batches();  // how many batches it took (past the ones the streams started from)
  void send_taken();
  void restart(const SharedBatch& t);
  void accept_stream(StreamConn* c);
  void start_stream(StreamConn* c);
  void unpark();
  void begin_reading(StreamConn* c, std::string pending);
  void flush(StreamConn* c);
  size_t take_write(StreamConn* c);  // the queue into c->bufs, counted: its bytes
  bool wrote(StreamConn* c, ssize_t n, size_t total);
  void sent(StreamConn* c, ssize_t result);  // the turn writer's result for c
  void open_ring();
  // Closes doomed connections, then one write per dirty connection; with
  // `intake`, batches arriving meanwhile ride along (relay_loop.cc).
  void finish_turn(bool intake = false);
  static constexpr size_t kIntakeEvery = 16;  // connections written between looks at the hub's queue
  void drop(StreamConn* c);
  void log_stream(const StreamConn* c, bool open);
  void unlist(StreamConn* c);
  void tick();
  void watch_slow(uint64_t t);
  void heartbeat(uint64_t t);
  void shutdown();
  struct ModuleTimer;
  void init_timer(ModuleTimer& t, StreamModule& m);

  const RelayOptions& opts_;
  RelayStats& stats_;
  api::KeySlots& slots_;
  uv_loop_t loop_;
  net::LoopWake wake_;  // not uv_async_t: see loop_wake.h
  uv_async_t stop_;
  uv_timer_t tick_;
  // --relay-pace: when the next pass may begin, and the timer that starts
  // it when a drain came sooner.
  WritePace pace_;
  net::LoopTimerUs pace_timer_;
  bool stopping_ = false;
  net::ReadBuffer read_buf_;

  StreamContext ctx_;
  // Inflates the compressed messages of every stream of the loop that
  // negotiated permessage-deflate (whole messages, one at a time).
  ws::Inflater inflater_;
  PtStreams pt_{ctx_};
  WsStreams ws_{ctx_};
  StreamModule* const modules_[kModules] = {&pt_, &ws_};  // by ModuleId
  struct ModuleTimer {
    uv_timer_t handle;
    RelayLoop* loop;
    StreamModule* module;
  };
  ModuleTimer timers_[kModules];  // one per module, by ModuleId
  std::vector<StreamConn*> all_;
  std::vector<StreamConn*> parked_;
  std::vector<SharedBatchPtr> took_;  // this drain's batches; capacity reused
  uint64_t next_ping_ = 0;
  // --relay-io uring: the turn's writes, one submission (finish_turn);
  // `in_pass_` while finish_turn writes, so only its writes are queued.
  net::TurnWriter ring_;
  bool in_pass_ = false;
};

}  // namespace oddsrelay::relay
