#include "rest/odds_cache.h"

#include "engine/views/json_views.h"
#include "rest/vocabulary.h"

namespace oddsrelay::rest {

OddsCache::Fragment& OddsCache::get(const std::shared_ptr<const EventEntry>& e) {
  auto it = slots_.find(e->number);
  if (it != slots_.end() && it->second.version == e) {
    hits_.add();
    return it->second.fragment;
  }
  misses_.add();
  if (it == slots_.end()) {
    it = slots_.emplace(e->number, Slot{}).first;
    size_.set(slots_.size());
  }
  Slot& s = it->second;
  s.version = e;
  Fragment& f = s.fragment;
  f.gz_ready = false;
  // Event ids need no escaping: they parsed as ids (letters, digits, '-', '_', '.').
  f.json.assign("\"").append(e->key).append("\":");
  json::StringSink sink(f.json);
  json::Writer w(sink);
  write_odds(w, *e, OddsForm::Get);
  return f;
}

const DeflatePiece* OddsCache::deflated(Fragment& f) {
  if (!f.gz_ready) {
    if (!deflate_piece(f.json, f.gz)) return nullptr;
    f.gz_ready = true;
    deflates_.add();
  }
  return &f.gz;
}

}  // namespace oddsrelay::rest
