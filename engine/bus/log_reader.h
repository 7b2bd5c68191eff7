// Reading the log stream in order from a given stream sequence: a push
// consumer of our own (one replica, in memory, no acks, flow control) that
// delivers every message from there, plus the position check every reader
// applies: each message must continue the log exactly where the reader
// stands (same epoch, first position = reader's seq + 1). A message that
// does not come right after the last one delivered (the library dropped
// some) fails the reader, and its user opens it again after the last message
// it applied: no gap, no duplicate. A consumer lost with its server is
// noticed and replaced the same way by the user (BusSource's silence check).
// Not nats.c's ordered consumer: 3.4 recreates that on threads of its own
// which race with closing it (a freed consumer name read by the delete, a
// freed subscription left in the connection's table), so an edge that
// rejoined after the bus was down crashed under load. Used by the edge
// follower and by oddsfeed.
#pragma once

#include <cstdint>
#include <string>

#include "engine/bus/nats_link.h"

namespace oddsrelay::bus {

struct LogMessage {
  uint64_t stream_seq = 0;
  uint64_t pending = 0;  // messages the server still holds after this one for this reader
  std::string epoch;
  uint64_t last = 0;     // position of its last record
  uint64_t records = 0;  // lines: positions last-records+1 .. last
  std::string data;
};

enum class Fit { Next, Old, Gap, OtherLog, Bad };
// How message `m` relates to a reader at (epoch, seq): Next continues it, Old
// is already applied (skip), Gap/OtherLog mean the reader cannot follow, Bad
// is a message without a valid Nats-Msg-Id or records.
Fit fit(const LogMessage& m, const std::string& epoch, uint64_t seq);
const char* fit_name(Fit f);

// A delivered message's log fields (epoch and last position from its
// Nats-Msg-Id, both empty when it has none; data; records); the stream
// sequence and pending are the caller's.
void decode_log_message(natsMsg* m, LogMessage& out);

// The log message at stream sequence `seq`, read by its sequence (the
// stream's leader answers; no consumer needed), decoded like the reader
// does. `pending` is left 0: the caller does not know what follows.
Got read_log_message(NatsLink& link, uint64_t seq, LogMessage& out, std::string& err);

class LogReader {
 public:
  ~LogReader() { close(); }
  // Subscribes from stream sequence `from` (>= 1).
  bool open(NatsLink& link, uint64_t from, std::string& err);
  enum class Next { Msg, Timeout, Failed };
  Next next(LogMessage& out, int timeout_ms, std::string& err);
  // Unsubscribes (nats.c deletes the consumer; when its server is gone the
  // request gives up after the context's wait, and the server removes an
  // ephemeral consumer without interest by itself) and frees the
  // subscription only once the connection's read loop is done with it:
  // nats.c 3.4's read loop looks a subscription up and goes on using it
  // without holding a reference (fixed in later nats.c), so one freed while
  // a message for it was being read crashed the read loop (a SEGV under
  // ASan on an edge that rejoined after the bus was down).
  void close();

 private:
  natsSubscription* sub_ = nullptr;
  natsConnection* nc_ = nullptr;  // the link's, for the flush before the subscription is freed
  uint64_t expect_ = 0;           // the stream sequence of the next message (0: the first since open)
  // The subscription's own context: its requests (creating the consumer,
  // and recreating it after a loss) give up after a second and are retried,
  // so a new consumer comes as soon as the cluster can place one.
  jsCtx* js_ = nullptr;
};

}  // namespace oddsrelay::bus
