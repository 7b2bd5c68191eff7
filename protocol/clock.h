// The two clocks of the node, defined once: wall time for what clients see
// (expiries, uptime, rate windows aligned to the minute, the simulator's
// record stamps, webhook times) and a monotonic one for intervals (stream
// handshake buckets, and each record's arrival: feed::Record::arrived_ns).
#pragma once

#include <chrono>
#include <cstdint>

namespace oddsrelay {

inline int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The monotonic clock in nanoseconds: one system-wide clock, so a stamp
// taken on a source's thread and one taken on the engine's compare.
inline int64_t mono_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace oddsrelay
