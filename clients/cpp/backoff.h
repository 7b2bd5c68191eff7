// Reconnect delays of the C++ client (docs/clients.md "States"):
// full-jitter exponential backoff, as the Python client's backoff.py. The
// n-th consecutive retry waits a uniform draw in [0, min(cap, base * 2^n)],
// base 0.5 s and cap 30 s, so a fleet cut at once does not come back at
// once; a connection that reaches its ready INFO starts the count again.
#pragma once

#include <algorithm>
#include <cmath>

namespace oddsrelay::client {

inline constexpr double kBackoffBase = 0.5, kBackoffCap = 30.0;

inline double backoff_ceiling(unsigned attempt, double base = kBackoffBase, double cap = kBackoffCap) {
  return std::min(cap, base * std::ldexp(1.0, static_cast<int>(std::min(attempt, 32u))));
}

// `u` is a uniform draw in [0, 1).
inline double backoff_delay(unsigned attempt, double u, double base = kBackoffBase, double cap = kBackoffCap) {
  return u * backoff_ceiling(attempt, base, cap);
}

}  // namespace oddsrelay::client
