// /ws, the JSON protocol (docs/api.md, Streams): what one relay loop sends
// its /ws streams. The snapshot (or, resumed, what changed since), a
// live_update at most once per interval merging the live events changed in
// between, and per-event market subscriptions the client asks for, with
// each subscribed market's changes. Frames go to the Outbox; no sockets
// here. Loop thread only.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "relay/hub.h"
#include "relay/outbox.h"
#include "relay/stream_module.h"

namespace oddsrelay::relay {

class WsStreams final : public StreamModule {
 public:
  explicit WsStreams(StreamContext& ctx) : ctx_(ctx) {}

  void add(StreamConn* c) override;
  void remove(StreamConn* c) override;  // its subscriptions go too
  void start(StreamConn* c, ResumeWindow::Verdict v, size_t first) override;
  // A batch the loop took (ctx.snap is its state now): the markets it
  // changed to their subscribers, its live events to the next live_update.
  void on_batch(const SharedBatch& b);
  void on_text(StreamConn* c, std::string_view text) override;
  // Emits the live_update now when the interval allows, else asks for
  // on_timer() after the rest of it.
  void schedule_live_update();
  void on_timer() override;
  void restart() override {
    pending_live_.clear();
    cache_seq_ = UINT64_MAX;
  }

  void error(StreamConn* c, std::string_view msg);

 private:
  void emit_live_update();
  void catch_up(StreamConn* c, size_t first);
  void unsubscribe_all(StreamConn* c);

  StreamContext& ctx_;
  std::vector<StreamConn*> list_;
  uint64_t cache_seq_ = UINT64_MAX;
  FrameRef snapshots_[2][5];  // without, with the pre-match map; per refusal Verdict (Resumed's slot: no resume asked)
  std::unordered_map<uint64_t, std::string> pending_live_;  // changed live events since the last live_update
  uint64_t last_live_emit_ = 0;
  bool timer_armed_ = false;
  std::unordered_map<uint64_t, std::vector<StreamConn*>> subscribers_;  // event number -> subscribers
};

}  // namespace oddsrelay::relay
