// Where the protocol modules put frames: a connection's send queue, and the
// loop's list of connections to write at the end of the turn. Knows no
// sockets; the loop (relay_loop.cc) writes the dirty list and closes the
// doomed one. Loop thread only.
#pragma once

#include <algorithm>
#include <atomic>
#include <functional>
#include <vector>

#include "protocol/ws_deflate.h"
#include "relay/close_reason.h"
#include "relay/deflated_frame.h"
#include "relay/relay_options.h"
#include "relay/relay_stats.h"
#include "relay/sse.h"
#include "relay/stream_conn.h"

namespace oddsrelay::relay {

class Outbox {
 public:
  explicit Outbox(RelayStats& stats) : stats_(stats) {}

  // Queues f; past the connection's byte limit the connection is doomed
  // (closed 1008 at the end of the turn) instead. Only to open connections.
  void send(StreamConn* c, FrameRef f, uint64_t channel = 0) {
    if (!c->open() || !(f = framed(c, std::move(f)))) return;
    if (!c->q.push(std::move(f), channel)) {
      count_close(stats_, CloseReason::QueueLimit);
      c->state = ConnState::Doomed;
      c->q.clear();
      doomed.push_back(c);
      return;
    }
    mark(c);
  }
  // Outside the byte limit: the 101 and the connect snapshot.
  void send_exempt(StreamConn* c, FrameRef f, uint64_t channel = 0) {
    if (!c->open() || !(f = framed(c, std::move(f)))) return;
    c->q.push_exempt(std::move(f), channel);
    mark(c);
  }
  void mark(StreamConn* c) {
    if (c->dirty) return;
    c->dirty = true;
    dirty.push_back(c);
  }
  // Before a connection is freed. A turn's pass usually empties both
  // lists before its callback returns, but a paced drain (--relay-pace)
  // leaves them filled until the pace timer's pass, and a client's socket
  // can close and be freed in between.
  void forget(StreamConn* c) {
    if (c->dirty) std::erase(dirty, c);
    c->dirty = false;
    std::erase(doomed, c);
  }

  std::vector<StreamConn*> dirty, doomed;
  const SnapshotPtr* snap = nullptr;  // the loop's state (its epoch names SSE positions)

 private:
  // The frame as the connection's framing wants it: a /pt-sse stream gets
  // its SSE form, a stream that negotiated permessage-deflate the
  // compressed form of a data frame of at least kDeflateMinPayload bytes;
  // either made once per frame for the loop, whatever the number of
  // streams (or filter buckets) that send it.
  FrameRef framed(StreamConn* c, FrameRef f) {
    if (!f) return f;
    if (c->behavior->sse)
      return f.other(Framing::Sse, [this](const FrameRef& w) { return sse_event(w, (*snap)->epoch); });
    if (!c->deflate || !deflatable(f->bytes())) return f;
    return f.other(Framing::Deflated, [this](const FrameRef& w) {
      stats_.frames_deflated.fetch_add(1, std::memory_order_relaxed);
      return deflated_frame(deflater_, w);
    });
  }

  RelayStats& stats_;
  ws::Deflater deflater_;  // the loop's one compressor, reset for each frame
};

// What a loop's protocol modules share: the options, the counters, the
// outbox, the state this loop's streams have been brought to and the batches
// it sent (for resume). Loop thread only.
struct StreamContext {
  StreamContext(const RelayOptions& o, RelayStats& s, SnapshotPtr start)
      : opts(o),
        stats(s),
        out(s),
        snap(std::move(start)),
        window(o.resume_window_bytes, static_cast<uint64_t>(std::max(o.resume_window_ms, 0)), o.threads) {
    out.snap = &snap;
  }
  const RelayOptions& opts;
  RelayStats& stats;
  Outbox out;
  SnapshotPtr snap;
  ResumeWindow window;
  uint64_t now = 0;  // loop ms, set by the loop on each callback
  // The newest seq the hub handed to any loop (a stream served by another
  // loop may resume from it); null in tests.
  const std::atomic<uint64_t>* hub_seq = nullptr;
  bool publishes_window = true;  // this loop's window is the one /v1/status shows
  // Writes a connection's queue now (a long catch-up); unset in tests.
  std::function<void(StreamConn*)> flush_now;

  void publish_window_stats() {
    if (!publishes_window) return;
    stats.window_groups.store(window.size(), std::memory_order_relaxed);
    stats.window_bytes.store(window.bytes(), std::memory_order_relaxed);
    stats.window_oldest.store(window.empty() ? snap->seq : window.front().from - 1, std::memory_order_relaxed);
  }
};

}  // namespace oddsrelay::relay
