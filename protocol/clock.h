// The two clocks of the node, defined once: wall time for what clients see
// (expiries, uptime, rate windows aligned to the minute, the simulator's
// record stamps, webhook times) and a monotonic one for intervals (stream
// handshake buckets).
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

}  // namespace oddsrelay
