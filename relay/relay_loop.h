// Inside the relay (relay_server.h): the loop thread's state. relay_loop.cc
// holds connection I/O and lifecycle (adopt, read, write, close, timers);
// fanout.cc turns batches into frames and queues them (connect snapshots,
// resumes from the window, /pt-ws deltas, /ws live updates and market
// subscriptions). Everything here runs on the loop thread, apart from the
// two inbound queues.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <concurrentqueue/concurrentqueue.h>
#include <uv.h>

#include "protocol/ws_frame.h"
#include "relay/frame_encoder.h"
#include "relay/relay_server.h"
#include "relay/resume_window.h"
#include "relay/send_queue.h"
#include "rest/api_keys.h"

namespace oddsrelay::relay {

class RelayLoop;
struct StreamConn;

// Classes of events a stream may see, by its key's permissions (rest/access.h).
inline constexpr uint8_t kLiveEvents = 1, kPrematchEvents = 2;
uint8_t stream_event_classes(const StreamConn* c);

// A /ws market subscription: one event, some markets (empty = all).
struct Subscription {
  uint64_t number = 0;
  std::vector<uint32_t> markets;
  bool wants(uint32_t m) const {
    return markets.empty() || std::find(markets.begin(), markets.end(), m) != markets.end();
  }
};

struct StreamConn {
  StreamConn(RelayLoop* l, rest::StreamTicket t, const RelayOptions& o)
      : loop(l), ticket(std::move(t)), parser(o.max_message), q(o.max_queue_bytes) {}
  uv_tcp_t tcp;
  uv_write_t wreq;
  RelayLoop* loop;
  rest::StreamTicket ticket;
  ws::FrameParser parser;
  std::string in;              // the start of a frame not yet complete
  SendQueue q;
  std::vector<uv_buf_t> bufs;  // the write in flight; capacity reused
  size_t write_rest = 0;       // bytes of it libuv still owes
  uint32_t all_slot = UINT32_MAX, fan_slot = UINT32_MAX;  // positions in RelayLoop::all_ and pt_/ws_
  bool holds_key_slot = false;
  bool dirty = false;          // in RelayLoop::dirty_
  bool doomed = false;         // over its byte limit: closed at the end of the turn
  bool close_sent = false;     // our close frame is queued: nothing more is sent
  bool close_after_write = false;
  bool closed = false;         // uv_close called
  uint64_t close_deadline = 0; // loop ms: dropped then even if the close handshake is unfinished
  uint64_t last_pong = 0;
  uint64_t queued_info_from = 0;       // /pt-ws: `from` of the last INFO queued...
  uint64_t queued_info_conflated = 0;  // ...and the count it reports
  // Odds frames queued while a write is in flight (so replaceable): event
  // number -> the markets the queued frame names. Cleared when the queue
  // goes into flight.
  std::unordered_map<uint64_t, std::vector<uint32_t>> queued_markets;
  // Slow-consumer watch (RelayOptions::slow_timeout_ms), in loop ms.
  uint64_t last_progress = 0;  // the client last took bytes, or had nothing waiting
  size_t write_queue_seen = 0; // libuv's unwritten bytes at the last tick
  size_t kernel_unsent_seen = 0;  // the socket's unsent bytes (SIOCOUTQ) at the last tick
  uint64_t over_soft_since = 0;  // 0: at or under the soft limit
  std::vector<Subscription> subs;

  bool is_pt() const { return ticket.kind == rest::StreamTicket::Kind::PtWs; }
  StreamFilter filter() const;  // fanout.cc: by the permission table
};

class RelayLoop {
 public:
  RelayLoop(const RelayOptions& opts, const SnapshotStore& store, RelayStats& stats);
  ~RelayLoop();

  void run();            // the loop thread
  void request_stop();   // any thread
  void wake() { uv_async_send(&wake_); }

  struct Adoption {
    rest::StreamTicket ticket;
    int fd = -1;
    std::string pending;
  };
  moodycamel::ConcurrentQueue<BatchPtr> batches;
  moodycamel::ConcurrentQueue<Adoption> adoptions;

  // Connection I/O (relay_loop.cc)
  void on_readable(StreamConn* c, ssize_t n, const uv_buf_t* buf);
  void on_written(StreamConn* c, int status);
  void send(StreamConn* c, FrameRef f, uint64_t channel = 0);  // queues; over the limit: closes
  void send_exempt(StreamConn* c, FrameRef f, uint64_t channel = 0);  // the 101 and connect snapshot
  // Queues our close frame (after what is queued, or instead of it) and
  // stops sending anything else; the key slot is free from now on.
  void close_with(StreamConn* c, uint16_t code, std::string_view reason, bool discard_queued = true);
  uint64_t now() { return uv_now(&loop_); }

  // The parser's handler interface (ws_frame.h), per connection.
  void on_message(StreamConn* c, ws::Opcode op, std::string_view payload);
  void on_ping(StreamConn* c, std::string_view payload);
  void on_pong(StreamConn* c);
  void on_close(StreamConn* c, uint16_t code);
  void on_error(StreamConn* c, uint16_t code, const char* reason);

 private:
  friend struct LoopCallbacks;
  void drain();  // the async callback: adoptions, batches, then one write per dirty connection
  void adopt(Adoption& a);
  void flush(StreamConn* c);
  void finish_turn();  // closes doomed connections, then one write per dirty connection
  void drop(StreamConn* c);
  void unlist(StreamConn* c);
  void release_key_slot(StreamConn* c);
  void tick();
  void watch_slow(uint64_t t);
  void heartbeat(uint64_t t);
  void shutdown();

  // Fan-out (fanout.cc)
  void process(const Batch& b);
  void restart(const Batch& b);  // a batch marked reset
  void fan_out();
  void start_stream(StreamConn* c);  // resume, or the connect snapshot
  void send_connect_snapshot(StreamConn* c, ResumeWindow::Verdict refused);
  FrameRef ready_info(const StreamFilter& filter, ResumeNote note);
  void catch_up_pt(StreamConn* c, size_t first, uint64_t seq);
  void catch_up_ws(StreamConn* c, size_t first);
  void send_group_frame(StreamConn* c, const GroupFrame& o);
  void send_marker(StreamConn* c, uint64_t seq, uint64_t from, int64_t at, const FrameRef& shared);
  void keep_group(uint64_t from, uint64_t seq, int64_t at, FrameRef marker);
  void publish_window_stats();
  void refresh_connect_cache();
  void schedule_live_update();
  void emit_live_update();
  void on_subscribe_message(StreamConn* c, std::string_view text);
  void unsubscribe_all(StreamConn* c);

  const RelayOptions& opts_;
  const SnapshotStore& store_;
  RelayStats& stats_;
  uv_loop_t loop_;
  uv_async_t wake_, stop_;
  uv_timer_t tick_, live_timer_;
  bool live_timer_armed_ = false;
  bool stopping_ = false;
  char read_buf_[64 * 1024];

  SnapshotPtr snap_;  // the state the streams have been brought to
  std::vector<StreamConn*> all_, pt_, ws_, dirty_, doomed_;
  std::unordered_map<uint64_t, uint32_t> key_slots_;  // key id -> streams held
  uint64_t next_ping_ = 0;

  // Frames of the batches being fanned out this turn, and the live events
  // they changed; kept in the resume window once sent.
  using Out = GroupFrame;
  std::vector<Out> out_;
  std::vector<LiveChange> turn_live_;
  ResumeWindow window_;
  static void append_event_frames(const std::vector<std::pair<int32_t, EventItem>>& events, uint8_t classes,
                                  std::vector<Out>& out);
  uint32_t pt_by_classes_[4] = {};  // /pt-ws streams by the event classes their key may see (status)
  uint64_t turn_from_ = 0;  // first batch of this turn; 0 = none yet
  int64_t turn_at_ = 0;
  // Connect snapshots, rebuilt when a connection arrives after the state moved.
  uint64_t cache_seq_ = UINT64_MAX;
  std::vector<Out> connect_evt_[4];  // per event classes, built when a stream of those connects
  uint8_t connect_evt_built_ = 0;    // bit per entry of connect_evt_
  std::vector<Out> connect_odds_;
  FrameRef ws_snapshots_[2][5];      // without, with the pre-match map; per refusal Verdict (Resumed's slot: no resume asked)
  struct FullOdds {
    std::shared_ptr<const EventEntry> version;
    FrameRef frame;
  };
  std::unordered_map<uint64_t, FullOdds> full_odds_;  // per live event, per entry version
  // /ws
  std::unordered_map<uint64_t, std::string> pending_live_;  // changed live events since the last live_update
  uint64_t last_live_emit_ = 0;
  std::unordered_map<uint64_t, std::vector<StreamConn*>> subscribers_;  // event number -> /ws subscribers
};

}  // namespace oddsrelay::relay
