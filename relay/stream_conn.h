// One /ws, /pt-ws or /pt-sse connection as a relay loop holds it: its
// socket (protocol/net/conn.h, the loop's business), its send queue (the
// protocol modules' business), how its kind behaves (stream_behavior.h,
// chosen once here) and where the stream stands in its life, as one state.
// Loop thread only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "protocol/api/stream_upgrade.h"
#include "protocol/net/conn.h"
#include "protocol/net/conn_list.h"
#include "protocol/ws_frame.h"
#include "relay/relay_options.h"
#include "relay/resume_window.h"
#include "relay/send_queue.h"
#include "relay/stream_behavior.h"
#include "relay/stream_filter.h"

namespace oddsrelay::relay {

class RelayLoop;
class StreamModule;

// Classes of events a stream may see, by its key's permissions (protocol/api/access.h).
inline constexpr uint8_t kLiveEvents = 1, kPrematchEvents = 2;

// A /ws market subscription: one event, some markets (empty = all).
struct Subscription {
  uint64_t number = 0;
  std::vector<uint32_t> markets;
  bool wants(uint32_t m) const {
    return markets.empty() || std::find(markets.begin(), markets.end(), m) != markets.end();
  }
};

// A connection's life, in order; it only moves forward.
enum class ConnState : uint8_t {
  Parked,        // accepted, holding a key slot, waiting for its loop to reach the seq it
                 // resumes from (another loop served it that far)
  Open,          // streaming
  Doomed,        // over its byte limit: closed at the end of the turn (lists may be walked now)
  Closing,       // our close frame is queued, nothing more is sent; dropped when the client
                 // answers it or at close_deadline
  ClosingWrite,  // as Closing, and the socket closes once the close frame is written (the
                 // client closed first, or broke the protocol)
  Closed,        // its socket closed; freed in the socket's on_closed
};

struct StreamConn {
  StreamConn(RelayLoop* l, api::StreamTicket t, const RelayOptions& o)
      : loop(l),
        ticket(std::move(t)),
        behavior(&behavior_for(ticket.kind)),
        parser(o.max_message),
        q(o.max_queue_bytes) {}
  net::Conn sock;  // its `in`: the start of a frame not yet complete (parked: all it sent)
  RelayLoop* loop;
  api::StreamTicket ticket;
  const StreamBehavior* behavior;
  StreamModule* module = nullptr;  // its kind's protocol module in its loop (RelayLoop::adopt)
  ws::FrameParser parser;
  SendQueue q;
  std::vector<uv_buf_t> bufs;  // the write in flight; capacity reused
  // Positions in the loop's list of every connection and in its protocol
  // module's list; listed in a module (or parked) = accepted, holding a key
  // slot.
  uint32_t all_slot = UINT32_MAX, fan_slot = UINT32_MAX;
  uint32_t bucket = UINT32_MAX;  // /pt-ws: its filter's bucket in PtStreams
  ConnState state = ConnState::Open;
  bool deflate = false;         // permessage-deflate negotiated: large data frames go compressed
  bool dirty = false;           // in Outbox::dirty (bookkeeping of the turn, not of the connection)
  uint64_t close_deadline = 0;  // loop ms: dropped then even if the close handshake is unfinished
  uint64_t last_pong = 0;
  uint64_t queued_info_from = 0;       // /pt-ws: `from` of the last INFO queued...
  uint64_t queued_info_conflated = 0;  // ...and the count it reports
  // The access log's close line: what was handed to the socket, since when,
  // and the first close this side decided (none: the peer went away).
  uint64_t opened_ms = 0, bytes_out = 0, frames_out = 0;
  uint16_t close_code = 0;
  std::string close_reason;
  uint64_t sent_seq = 0;  // /pt-ws: the seq its last INFO (or snapshot, or catch-up) reached
  // Odds frames queued while a write is in flight (so replaceable): event
  // number -> the markets the queued frame names. Cleared when the queue
  // goes into flight.
  std::unordered_map<uint64_t, std::vector<uint32_t>> queued_markets;
  // Slow-consumer watch (RelayOptions::slow_timeout_ms), in loop ms; the
  // write progress is the socket's (sock.last_written).
  uint64_t over_soft_since = 0;  // 0: at or under the soft limit
  std::vector<Subscription> subs;

  bool open() const { return state == ConnState::Open; }
  bool closing() const { return state == ConnState::Closing || state == ConnState::ClosingWrite; }
  bool closed() const { return state == ConnState::Closed; }
  bool listed() const { return fan_slot != UINT32_MAX; }
  StreamFilter filter() const;
};

uint8_t stream_event_classes(const StreamConn* c);
bool may_odds(const StreamConn* c);

using net::list_add;
using net::list_remove;

}  // namespace oddsrelay::relay
