// The relay's settings (the --max-queue-bytes, --ws-*, --relay-threads
// family of flags): what every loop, protocol module and connection reads,
// in a header of its own so that those lower files need not include the
// top object (relay_server.h) to know them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace oddsrelay::relay {

struct RelayOptions {
  size_t max_queue_bytes = 8 << 20;  // per connection; past it: close 1008
  int live_update_ms = 1000;         // /ws live_update at most this often
  int ping_interval_ms = 30'000;     // server ping (/ws and /pt-ws); no pong for 2 intervals: terminated
  // A stream whose writes have not progressed for this long, or that has
  // held more than a quarter of max_queue_bytes for this long, is closed
  // 1008 (a slow consumer: Redis's soft output-buffer limit, NATS's slow
  // consumer). 0: never.
  int slow_timeout_ms = 30'000;
  size_t max_message = 64 * 1024;           // largest client message (close 1009 past it)
  int close_grace_ms = 2'000;               // after our close frame, wait this long for the client's
  size_t resume_window_bytes = 128u << 20;  // encoded batches kept for `resume=EPOCH:SEQ`, at most...
  int resume_window_ms = 60'000;            // ...and for at most this long
  unsigned threads = 1;                     // relay loops (--relay-threads)
  // --ws-compression shared: permessage-deflate answered when offered,
  // each frame compressed once per loop and shared (docs/architecture.md);
  // off: never negotiated.
  bool ws_compression = true;
  // --relay-io: how a loop turn's writes reach the sockets. Writev: one
  // writev per connection; Uring: one io_uring submission for all of them
  // (protocol/net/turn_writer.h), writev where the build or kernel has none.
  enum class Io : uint8_t { Writev, Uring };
  Io io = Io::Writev;
  // --relay-pace: the largest share of a loop's time (percent) its write
  // passes may take before batches wait to share the next pass
  // (write_pace.h); 0 = off, every batch written as it comes.
  unsigned pace_pct = 0;
};

// --relay-threads' default: half the cores (the engine, the journal and
// REST need the rest), at least 1, at most 16.
unsigned default_relay_threads();

}  // namespace oddsrelay::relay
