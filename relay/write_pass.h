// One loop turn's writes (RelayLoop::finish_turn), apart from the sockets
// so the tests drive the same order: which connection is written when, and
// where batches that arrive while the loop writes go. A relay loop's time
// is the write syscall, one per connection per write (perf/PROFILE.md, "The
// relay loop at 200 subscribers"), so what this order decides, how many
// batches one write carries without holding a frame, is what fan-out costs.
//
// From a drain (`intake` set): the connections dirty when the turn began
// are written in order, and every `every` connections of that pass the
// intake may take the batches that have arrived (fan-out marks
// connections). A connection not yet written carries them in the write it
// was about to get; one already written is marked again and written at the
// end of the pass, in the same turn. No frame is held: each goes out at its
// connection's first write after it arrived. The intake looks only during
// the first pass, so a turn writes a connection at most twice and reads
// wait at most one pass. Without intake (a timer, a client's message),
// everything marked is written, what the pass marks included.
#pragma once

#include <cstddef>

#include "relay/outbox.h"

namespace oddsrelay::relay {

// `close(c)`: closes a connection over its byte limit (Outbox::doomed);
// `write(c)`: writes its queue. The list is empty afterwards.
template <class Intake, class Close, class Write>
void write_pass(Outbox& out, Intake* intake, size_t every, Close&& close, Write&& write) {
  const size_t first_pass = intake ? out.dirty.size() : 0;
  for (size_t i = 0;; ++i) {  // write may drop a connection, never add one
    if (i < first_pass && i % every == 0 && i > 0) (*intake)();
    if (!out.doomed.empty()) {
      for (StreamConn* c : out.doomed) close(c);
      out.doomed.clear();
    }
    if (i >= out.dirty.size()) break;
    StreamConn* c = out.dirty[i];
    c->dirty = false;
    write(c);
  }
  out.dirty.clear();
}

}  // namespace oddsrelay::relay
