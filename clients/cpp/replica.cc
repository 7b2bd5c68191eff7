// Applying frame operations to the replica (replica.h).
#include "clients/cpp/replica.h"

#include "protocol/digest_terms.h"

namespace oddsrelay::client {

void ReplicaState::drop_odds(uint64_t number) {
  auto it = odds_.find(number);
  if (it == odds_.end()) return;
  for (const auto& [id, m] : it->second) odds_total_ -= m.sum;
  odds_.erase(it);
}

void ReplicaState::apply(const FrameOp& op) {
  switch (op.kind) {
    case FrameOp::kBook:
      odds_.try_emplace(op.number);
      return;
    case FrameOp::kEvent: {
      auto it = events_.find(op.key);
      if (it != events_.end()) event_total_ -= event_term(it->second.number);
      if (op.json.empty()) {
        if (it != events_.end()) events_.erase(it);
      } else {
        if (it == events_.end()) it = events_.emplace(std::string(op.key), Event{}).first;
        it->second.number = op.number;
        it->second.live = op.live;
        it->second.json.assign(op.json);
        event_total_ += event_term(op.number);
      }
      // Odds channels exist only for live events: an event that left the
      // lists or is not live any more takes its odds with it.
      if (op.json.empty() || !op.live) drop_odds(op.number);
      return;
    }
    case FrameOp::kMarket: {
      Book& book = odds_[op.number];
      auto it = book.find(op.key);
      if (it != book.end()) odds_total_ -= it->second.sum;
      if (op.json.empty()) {
        if (it != book.end()) book.erase(it);
        return;
      }
      if (it == book.end()) it = book.emplace(std::string(op.key), Market{}).first;
      it->second.json.assign(op.json);
      it->second.sum = op.sum;
      odds_total_ += op.sum;
      return;
    }
  }
}

void ReplicaState::clear() {
  events_.clear();
  odds_.clear();
  event_total_ = odds_total_ = 0;
}

OddsData ReplicaState::data() const {
  OddsData out;
  std::unordered_map<uint64_t, const std::string*> ids;
  for (const auto& [id, e] : events_) {
    ids[e.number] = &id;
    if (e.live) out[id];
  }
  for (const auto& [number, book] : odds_) {
    auto id = ids.find(number);
    if (book.empty() && id == ids.end()) continue;
    auto& dst = out[id == ids.end() ? std::to_string(number) : *id->second];
    for (const auto& [mid, m] : book) dst[mid] = m.json;
  }
  return out;
}

}  // namespace oddsrelay::client
