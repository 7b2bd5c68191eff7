#include "tools/oddsrelay/catalog_reload.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace oddsrelay {

CatalogReload::CatalogReload(CatalogSource& source, int64_t interval_ms, Clock::time_point now)
    : source_(source), interval_(interval_ms), due_(now + interval_) {}

CatalogSource::Reload CatalogReload::now(const char* why, Clock::time_point t) {
  due_ = t + interval_;  // a SIGHUP restarts the schedule
  std::string note;
  CatalogSource::Reload r = source_.reload(note);
  const bool scheduled = std::string_view(why) == "schedule";
  if (!scheduled || r == CatalogSource::Reload::Replaced || r == CatalogSource::Reload::Failed)
    std::fprintf(stderr, "oddsrelay: %s (%s)\n", note.c_str(), why);
  return r;
}

void CatalogReload::poll(Clock::time_point t) {
  if (interval_.count() > 0 && !source_.path().empty() && t >= due_) now("schedule", t);
}

double CatalogReload::seconds_until_due(double cap, Clock::time_point t) const {
  if (interval_.count() <= 0 || source_.path().empty()) return cap;
  const double left = std::chrono::duration<double>(due_ - t).count();
  return std::clamp(left, 0.001, cap);
}

}  // namespace oddsrelay
