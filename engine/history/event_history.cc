// Point making for one event (engine/history/event_history.h).
#include "engine/history/event_history.h"

#include <algorithm>
#include <climits>
#include <tuple>

namespace oddsrelay::history {

bool operator<(const OutcomeKey& a, const OutcomeKey& b) {
  return std::forward_as_tuple(a.market, a.line.view(), a.outcome) <
         std::forward_as_tuple(b.market, b.line.view(), b.outcome);
}

int64_t EventHistory::add_point(OutcomeHistory& o, const Point& p) {
  const size_t before = o.points.bytes();
  o.points.append(p);
  ++points_;
  if (p.priced) {
    if (!o.open.priced) o.open = p;
    o.last_priced = p;
  }
  const int64_t grown = static_cast<int64_t>(o.points.bytes()) - static_cast<int64_t>(before);
  bytes_ += static_cast<size_t>(grown);
  return grown;
}

size_t EventHistory::market_index(uint32_t market) {
  auto it = std::lower_bound(marks_.begin(), marks_.end(), market,
                             [](const MarketMarks& m, uint32_t id) { return m.market() < id; });
  const size_t i = static_cast<size_t>(it - marks_.begin());
  if (it == marks_.end() || it->market() != market) {
    marks_.insert(it, MarketMarks(market));
    slots_.insert(slots_.begin() + static_cast<ptrdiff_t>(i), MarketSlots{});
  }
  return i;
}

const OutcomeHistory* EventHistory::find(const OutcomeKey& k) const {
  auto it = std::lower_bound(outcomes_.begin(), outcomes_.end(), k,
                             [](const auto& o, const OutcomeKey& key) { return o->key < key; });
  return it != outcomes_.end() && !(k < (*it)->key) ? it->get() : nullptr;
}

OutcomeHistory* EventHistory::find_mut(const OutcomeKey& k) { return const_cast<OutcomeHistory*>(find(k)); }

bool EventHistory::listed_at(uint64_t seq) const {
  bool listed = false;
  for (const auto& [at, l] : listing_) {
    if (at > seq) break;
    listed = l;
  }
  return listed;
}

bool EventHistory::idle() const {
  if (!outcomes_.empty() || (!listing_.empty() && listing_.back().second)) return false;
  return std::all_of(marks_.begin(), marks_.end(), [](const MarketMarks& m) { return m.removed(); });
}

int64_t EventHistory::on_market(const feed::MarketRec& rec, int64_t at, uint64_t seq) {
  const size_t bytes_before = bytes_;
  seen(seq);
  const size_t mi = market_index(rec.market);
  MarketMarks& mm = marks_[mi];
  {
    const size_t b = mm.bytes();
    mm.add(seq, at, &rec);
    bytes_ += mm.bytes() - b;
  }
  MarketSlots& ms = slots_[mi];
  const int32_t layout = mm.last_layout();
  if (layout != ms.layout) {
    relayout(ms, rec, layout, at, seq);
  } else {
    // The same lines and outcomes in the same order: slot k is the record's
    // k-th outcome.
    Slot* slot = ms.slots.data();
    for (const feed::LineIn& l : rec.lines)
      for (uint32_t i = l.first; i < l.first + l.count; ++i, ++slot) {
        const feed::OutcomeIn& oi = rec.outcomes[i];
        if (slot->price == oi.price && slot->flags == oi.flags && slot->s == l.suspended) continue;
        slot->price = oi.price;
        slot->flags = oi.flags;
        slot->s = l.suspended;
        add_point(*slot->o, Point{at, seq, oi.price, oi.flags, l.suspended, true});
      }
  }
  return static_cast<int64_t>(bytes_) - static_cast<int64_t>(bytes_before);
}

void EventHistory::relayout(MarketSlots& ms, const feed::MarketRec& rec, int32_t layout, int64_t at, uint64_t seq) {
  const uint32_t m = rec.market;
  std::vector<Slot> next;
  next.reserve(rec.outcomes.size());
  std::vector<char> kept(ms.slots.size(), 0);  // per old slot: still in the record
  bool added = false;
  for (const feed::LineIn& l : rec.lines) {
    const LineKey line(l.key);
    for (uint32_t i = l.first; i < l.first + l.count; ++i) {
      const feed::OutcomeIn& oi = rec.outcomes[i];
      const Point p{at, seq, oi.price, oi.flags, l.suspended, true};
      const OutcomeKey k{m, line, oi.id};
      OutcomeHistory* o = nullptr;
      for (size_t j = 0; j < ms.slots.size(); ++j)
        if (!kept[j] && ms.slots[j].o->key.outcome == oi.id && ms.slots[j].o->key.line == line) {
          kept[j] = 1;
          o = ms.slots[j].o;
          break;
        }
      if (!o) o = find_mut(k);
      if (!o) {
        outcomes_.push_back(std::make_unique<OutcomeHistory>());
        o = outcomes_.back().get();
        o->key = k;
        bytes_ += kOutcomeBytes;
        added = true;
      }
      // (A series the memory bound cut empty still knows its last point.)
      if (!o->points.last().same_quote(p)) add_point(*o, p);
      next.push_back(Slot{o, oi.price, oi.flags, l.suspended});
    }
  }
  // Outcomes of the market the record no longer has: withdrawn.
  for (size_t j = 0; j < ms.slots.size(); ++j)
    if (!kept[j]) add_point(*ms.slots[j].o, Point{at, seq, 0, 0, 0, false});
  if (added)
    std::sort(outcomes_.begin(), outcomes_.end(), [](const auto& a, const auto& b) { return a->key < b->key; });
  ms.slots.swap(next);
  ms.layout = layout;
}

int64_t EventHistory::on_remove(int64_t at, uint64_t seq) {
  int64_t grown = 0;
  for (MarketMarks& mm : marks_)
    if (!mm.removed()) {
      const size_t b = mm.bytes();
      mm.add(seq, at, nullptr);
      grown += static_cast<int64_t>(mm.bytes() - b);
    }
  if (listing_.empty() || listing_.back().second) listing_.emplace_back(seq, false);
  bytes_ += static_cast<size_t>(grown);
  for (MarketSlots& ms : slots_) {
    ms.slots.clear();
    ms.layout = -1;
  }
  for (auto& o : outcomes_)
    if (o->points.last().priced) grown += add_point(*o, Point{at, seq, 0, 0, 0, false});
  return grown;
}

void EventHistory::on_event(std::string_view key, bool live, uint64_t seq) {
  if (key != key_) key_ = key;
  seen(seq);
  if (listing_.empty() || !listing_.back().second) listing_.emplace_back(seq, true);
  if (!live || live_seq_ != 0) return;
  live_seq_ = seq;
  for (auto& o : outcomes_) o->close = o->last_priced;
}

int64_t EventHistory::cut_before(uint64_t seq) {
  int64_t freed = 0;
  for (auto& o : outcomes_) {
    const size_t before = o->points.bytes();
    const uint32_t dropped = o->points.cut_before(seq);
    if (dropped == 0) continue;
    points_ -= dropped;
    freed += static_cast<int64_t>(before) - static_cast<int64_t>(o->points.bytes());
  }
  for (MarketMarks& mm : marks_) freed += mm.cut_before(seq);
  // An outcome out of the book whose points are all cut goes whole (its
  // open and close with it): what it costs besides its points is most of
  // what a short series holds. One still in the book stays, so that its
  // next change or withdrawal is a point as it would have been (and no
  // slot points at one that left).
  const size_t n = outcomes_.size();
  std::erase_if(outcomes_, [](const auto& o) { return o->points.count() == 0 && !o->points.last().priced; });
  freed += static_cast<int64_t>((n - outcomes_.size()) * kOutcomeBytes);
  bytes_ -= static_cast<size_t>(freed);
  return freed;
}

int64_t EventHistory::oldest_ts() const {
  int64_t oldest = INT64_MAX;
  for (const auto& o : outcomes_) o->points.for_each([&](const Point& p) { oldest = std::min(oldest, p.ts); });
  return oldest;
}

}  // namespace oddsrelay::history
