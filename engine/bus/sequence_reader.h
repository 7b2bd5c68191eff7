// Reading the log stream by stream sequence, many messages a round trip:
// what an edge does while no consumer can be placed (the cluster has no
// metadata leader, or the stream's leader is being elected). It asks the
// stream's direct-get subject for the next `max` sequences at once; every
// replica of a stream made with AllowDirect answers from its own store, so
// reading goes on while the leader is elected, at the pace of a batch per
// round trip where one js_GetMsg per message only kept up with the ingest.
// Each message still passes BusSource's position check, so a replica that
// lags behind only ends a batch early (it answers 404 past its store).
// Used by the edge follower (engine/bus/bus_source.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/bus/log_reader.h"
#include "engine/bus/nats_link.h"

namespace oddsrelay::bus {

class SequenceReader {
 public:
  ~SequenceReader() { close(); }
  // Up to `max` messages from stream sequence `from` on, in order, into
  // `out` (cleared): Ok with at least one; Missing when `from` is past the
  // stream's end; Failed (err) when the bus did not answer in time or the
  // stream takes no direct gets (made without AllowDirect). `unsupported`
  // is set when nothing answered at all: a stream without AllowDirect, or
  // every replica unreachable; the caller asks the leader to tell which.
  Got read(NatsLink& link, uint64_t from, size_t max, std::vector<LogMessage>& out, std::string& err,
           bool& unsupported);
  // Unsubscribes the reply inbox; its subscription is freed only after a
  // flush, once the connection's read loop is done with it (LogReader::close
  // says why).
  void close();

 private:
  bool subscribe(NatsLink& link, std::string& err);
  natsSubscription* sub_ = nullptr;
  natsConnection* nc_ = nullptr;
  std::string inbox_;   // replies come to <inbox>.<round>.<index>
  uint64_t round_ = 0;  // replies of an earlier round that gave up are dropped
};

}  // namespace oddsrelay::bus
