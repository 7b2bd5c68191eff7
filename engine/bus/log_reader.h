// Reading the log stream in order from a given stream sequence: an ordered
// JetStream consumer (nats.c recreates it from the last message it delivered
// after a reconnect or a missed heartbeat, every second here, so a bus
// restart or a consumer lost with its server costs no gap),
// plus the position check every reader applies: each message must continue
// the log exactly where the reader stands (same epoch, first position =
// reader's seq + 1). Used by the edge follower and by oddsfeed.
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
  // Drops the subscription without asking the server to delete the
  // consumer: the server removes an ephemeral consumer without interest by
  // itself. Deleting it would wait for a server that may be gone, and it
  // races nats.c 3.4's own recreation of an ordered consumer: its delete
  // (natsSubscription_Unsubscribe) reads the consumer's name after letting
  // go of the subscription's lock, while the recreating thread frees that
  // name and puts the new one's in its place (a use-after-free that ASan
  // caught in printf, on an edge rejoining after the bus was down).
  void close();

 private:
  natsSubscription* sub_ = nullptr;
  // The subscription's own context: its requests (creating the consumer,
  // and recreating it after a loss) give up after a second and are retried,
  // so a new consumer comes as soon as the cluster can place one.
  jsCtx* js_ = nullptr;
};

}  // namespace oddsrelay::bus
