// When the server reads --catalog FILE again: on SIGHUP (the main thread
// calls now()) and every --catalog-reload interval (the main thread's signal
// wait is cut short to poll() on time). The reading and publishing are
// engine/catalog/catalog_source.h's; this decides when, and logs one line per
// outcome: every SIGHUP, and a scheduled reload only when it replaced the
// catalog or failed (an unchanged file every hour says nothing).
#pragma once

#include <chrono>
#include <cstdint>

#include "engine/catalog/catalog_source.h"

namespace oddsrelay {

class CatalogReload {
 public:
  using Clock = std::chrono::steady_clock;
  // `interval_ms` 0: only on SIGHUP.
  CatalogReload(CatalogSource& source, int64_t interval_ms, Clock::time_point now = Clock::now());

  CatalogSource::Reload now(const char* why, Clock::time_point t = Clock::now());
  // Reloads if the interval has passed since the last reload.
  void poll(Clock::time_point t = Clock::now());
  // How long the caller may sleep before poll() has work (capped at `cap`).
  double seconds_until_due(double cap, Clock::time_point t = Clock::now()) const;

 private:
  CatalogSource& source_;
  std::chrono::milliseconds interval_;
  Clock::time_point due_;
};

}  // namespace oddsrelay
