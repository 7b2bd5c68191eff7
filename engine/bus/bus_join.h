// How an edge (or oddsfeed) joins a log that began long before it: the
// newest snapshot on STREAM_SNAP whose continuation the log stream still
// holds, loaded into a fresh engine; or, with no snapshot, the log from its
// first position when the stream still holds it. The caller then follows
// the stream from `next_stream_seq` (engine/bus/log_reader.h). See
// docs/architecture.md "Scale-out".
#pragma once

#include <cstdint>
#include <string>

#include "engine/bus/nats_link.h"
#include "engine/core/engine.h"

namespace oddsrelay::bus {

struct JoinResult {
  std::string epoch;
  uint64_t seq = 0;              // position the engine holds now
  uint64_t next_stream_seq = 1;  // follow the log stream from here
  bool from_snapshot = false;
  uint64_t snapshot_bytes = 0, snapshot_events = 0;
  uint32_t chunks = 0;
  double millis = 0;
};

enum class Join {
  Joined,  // the engine holds the state at `seq` and is published
  NotYet,  // nothing to join yet (empty log, or the newest snapshot is older than the stream keeps): retry later
  Failed,  // the bus could not be read: retry later
};

// `engine` must be fresh; after Joined it holds the log's epoch and state.
// After NotYet or Failed it is untouched, except when a snapshot that passed
// its checksum fails to load (`corrupt` set): discard the engine then.
Join join_log(NatsLink& link, Engine& engine, JoinResult& out, std::string& why, bool& corrupt);

}  // namespace oddsrelay::bus
