#include "rest/odds_cache.h"

#include "rest/json_views.h"

namespace oddsrelay::rest {

const std::string& OddsCache::get(const std::shared_ptr<const EventEntry>& e) {
  auto it = slots_.find(e->number);
  if (it != slots_.end() && it->second.version == e) {
    ++hits_;
    return it->second.json;
  }
  ++misses_;
  if (it == slots_.end()) {
    if (slots_.size() >= kMaxEntries) slots_.clear();
    it = slots_.emplace(e->number, Slot{}).first;
  }
  Slot& s = it->second;
  s.version = e;
  s.json.clear();
  json::StringSink sink(s.json);
  json::Writer w(sink);
  write_odds(w, *e, OddsForm::Get);
  return s.json;
}

}  // namespace oddsrelay::rest
