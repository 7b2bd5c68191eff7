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

MarketMarks& EventHistory::marks_of(uint32_t market) {
  auto it = std::lower_bound(marks_.begin(), marks_.end(), market,
                             [](const MarketMarks& m, uint32_t id) { return m.market() < id; });
  if (it == marks_.end() || it->market() != market) it = marks_.insert(it, MarketMarks(market));
  return *it;
}

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
  const uint32_t m = rec.market;
  seen(seq);
  {
    MarketMarks& mm = marks_of(m);
    const size_t b = mm.bytes();
    mm.add(seq, at, &rec);
    bytes_ += mm.bytes() - b;
  }
  // The market's range of outcomes_; outcomes new to it are collected
  // apart and the list sorted again once.
  std::vector<char> seen;  // per outcome of that range: still in the record
  auto first = std::lower_bound(outcomes_.begin(), outcomes_.end(), m,
                                [](const OutcomeHistory& o, uint32_t id) { return o.key.market < id; });
  auto last = std::find_if(first, outcomes_.end(), [m](const OutcomeHistory& o) { return o.key.market != m; });
  const size_t lo = static_cast<size_t>(first - outcomes_.begin()), hi = static_cast<size_t>(last - outcomes_.begin());
  seen.assign(hi - lo, 0);
  std::vector<OutcomeHistory> added;
  for (const feed::LineIn& l : rec.lines) {
    const LineKey line(l.key);
    for (uint32_t i = l.first; i < l.first + l.count; ++i) {
      const feed::OutcomeIn& oi = rec.outcomes[i];
      Point p{at, seq, oi.price, oi.flags, l.suspended, true};
      OutcomeKey k{m, line, oi.id};
      auto it = std::lower_bound(outcomes_.begin() + static_cast<ptrdiff_t>(lo),
                                 outcomes_.begin() + static_cast<ptrdiff_t>(hi), k,
                                 [](const OutcomeHistory& o, const OutcomeKey& key) { return o.key < key; });
      if (it != outcomes_.begin() + static_cast<ptrdiff_t>(hi) && !(k < it->key)) {
        seen[static_cast<size_t>(it - outcomes_.begin()) - lo] = 1;
        // (A series the memory bound cut empty still knows its last point.)
        if (!it->points.last().same_quote(p)) add_point(*it, p);
        continue;
      }
      added.emplace_back();
      added.back().key = k;
      add_point(added.back(), p);
    }
  }
  // Outcomes of the market the record no longer has: withdrawn.
  for (size_t i = lo; i < hi; ++i)
    if (!seen[i - lo] && outcomes_[i].points.last().priced) add_point(outcomes_[i], Point{at, seq, 0, 0, 0, false});
  if (!added.empty()) {
    for (OutcomeHistory& o : added) {
      bytes_ += kOutcomeBytes;
      outcomes_.push_back(std::move(o));
    }
    std::sort(outcomes_.begin(), outcomes_.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  }
  return static_cast<int64_t>(bytes_) - static_cast<int64_t>(bytes_before);
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
  for (OutcomeHistory& o : outcomes_)
    if (o.points.last().priced) grown += add_point(o, Point{at, seq, 0, 0, 0, false});
  return grown;
}

void EventHistory::on_event(std::string_view key, bool live, uint64_t seq) {
  if (key != key_) key_ = key;
  seen(seq);
  if (listing_.empty() || !listing_.back().second) listing_.emplace_back(seq, true);
  if (!live || live_seq_ != 0) return;
  live_seq_ = seq;
  for (OutcomeHistory& o : outcomes_) o.close = o.last_priced;
}

int64_t EventHistory::cut_before(uint64_t seq) {
  int64_t freed = 0;
  for (OutcomeHistory& o : outcomes_) {
    const size_t before = o.points.bytes();
    const uint32_t dropped = o.points.cut_before(seq);
    if (dropped == 0) continue;
    points_ -= dropped;
    freed += static_cast<int64_t>(before) - static_cast<int64_t>(o.points.bytes());
  }
  for (MarketMarks& mm : marks_) freed += mm.cut_before(seq);
  // An outcome out of the book whose points are all cut goes whole (its
  // open and close with it): what it costs besides its points is most of
  // what a short series holds. One still in the book stays, so that its
  // next change or withdrawal is a point as it would have been.
  const size_t n = outcomes_.size();
  std::erase_if(outcomes_, [](const OutcomeHistory& o) { return o.points.count() == 0 && !o.points.last().priced; });
  freed += static_cast<int64_t>((n - outcomes_.size()) * kOutcomeBytes);
  bytes_ -= static_cast<size_t>(freed);
  return freed;
}

int64_t EventHistory::oldest_ts() const {
  int64_t oldest = INT64_MAX;
  for (const OutcomeHistory& o : outcomes_) o.points.for_each([&](const Point& p) { oldest = std::min(oldest, p.ts); });
  return oldest;
}

}  // namespace oddsrelay::history
