// The interface the relay loop drives its protocol modules through
// (PtStreams for /pt-ws and /pt-sse, WsStreams for /ws): a connection's
// module is picked once, from its StreamBehavior, when the loop adopts it,
// and every connection event (accepted, started, a client message, gone)
// goes to that module without the loop asking which kind it is. Calls are
// per connection event or per timer, never per frame: the fan-out of a
// batch stays a direct call on each module.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>

#include "relay/resume_window.h"

namespace oddsrelay::relay {

struct StreamConn;

class StreamModule {
 public:
  virtual ~StreamModule() = default;
  virtual void add(StreamConn* c) = 0;     // accepted: listed and counted
  virtual void remove(StreamConn* c) = 0;  // no more frames
  // The stream's start: `v` Resumed with a resume asked: the window's
  // batches from `first`; otherwise the connect snapshot (with the
  // refusal's reason when one was asked).
  virtual void start(StreamConn* c, ResumeWindow::Verdict v, size_t first) = 0;
  virtual void on_text(StreamConn* c, std::string_view text) = 0;  // a client message
  // The state was replaced: changes of the old one are not sent, snapshots
  // are rebuilt.
  virtual void restart() = 0;
  // The module's one-shot timer (armed through arm_timer) fired.
  virtual void on_timer() = 0;
  // Arms the module's timer to fire in `delay` ms (set by the loop; unset in tests).
  std::function<void(uint64_t delay)> arm_timer;
};

}  // namespace oddsrelay::relay
