// Inside the relay (relay_server.h): the loop thread's state. relay_loop.cc
// holds connection I/O and lifecycle (adopt, read, write, close, timers);
// fanout.cc turns batches into frames and queues them (connect snapshots,
// /pt-ws deltas, /ws live updates and market subscriptions). Everything
// here runs on the loop thread, apart from the two inbound queues.
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
#include "relay/send_queue.h"

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
  // Slow-consumer watch (RelayOptions::slow_timeout_ms), in loop ms.
  uint64_t last_progress = 0;  // the client last took bytes, or had nothing waiting
  size_t write_queue_seen = 0; // libuv's unwritten bytes at the last tick
  size_t kernel_unsent_seen = 0;  // the socket's unsent bytes (SIOCOUTQ) at the last tick
  uint64_t over_soft_since = 0;  // 0: at or under the soft limit
  std::vector<Subscription> subs;
  // While a write is in flight (fanout.cc): the market ids each queued odds
  // frame names, and the `from` and `at` of the queued INFO. A newer frame
  // of the channel replaces the queued one with one that names both lists,
  // and a newer INFO takes the older one's `from`: conflation skips
  // intermediate prices, never a market's last change or a batch of the
  // seq chain.
  std::unordered_map<uint64_t, std::vector<uint32_t>> queued_odds;
  uint64_t queued_info_from = 0;
  int64_t queued_info_at = 0;

  bool is_pt() const { return ticket.kind == rest::StreamTicket::Kind::PtWs; }
  bool wants_sport(int32_t sport) const {
    return ticket.sports.empty() || std::binary_search(ticket.sports.begin(), ticket.sports.end(), sport);
  }
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
  void fan_out();
  void send_connect_snapshot(StreamConn* c);
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

  // Frames of the batch being fanned out.
  struct Out {
    FrameRef frame;
    uint64_t channel;  // conflation channel: the event number for odds, 0 otherwise
    int32_t sport;
    bool odds;         // odds channel (prices), else an event list
    uint8_t events = 0;  // event list: the classes of events it holds (kLiveEvents | kPrematchEvents)
    uint32_t markets_first = 0, markets_count = 0;  // the market ids an odds frame names, in out_markets_
  };
  std::vector<Out> out_;
  std::vector<uint32_t> out_markets_;  // for out_, reused from turn to turn
  void send_odds(StreamConn* c, const Out& o);  // merges with a queued frame of its channel
  static bool admits(const StreamConn* c, const Out& o);
  static void append_event_frames(const std::vector<std::pair<int32_t, EventItem>>& events, uint8_t classes,
                                  std::vector<Out>& out);
  uint32_t pt_by_classes_[4] = {};  // /pt-ws streams by the event classes their key may see
  uint64_t turn_from_ = 0;  // first batch of this turn; 0 = none yet
  int64_t turn_at_ = 0;
  // Connect snapshots, rebuilt when a connection arrives after the state moved.
  uint64_t cache_seq_ = UINT64_MAX;
  std::vector<Out> connect_evt_[4];  // per event classes, built when a stream of those connects
  uint8_t connect_evt_built_ = 0;    // bit per entry of connect_evt_
  std::vector<Out> connect_odds_;
  FrameRef ws_snapshot_[2];          // without, with the pre-match map
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
