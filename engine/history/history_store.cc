// The history's index, memory bound and log position
// (engine/history/history_store.h).
#include "engine/history/history_store.h"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <variant>

namespace oddsrelay::history {

namespace {
// Per event: the map's node and the key's heap bytes, roughly.
constexpr size_t kEventBytes = 64;
}  // namespace

EventHistory& HistoryStore::entry(uint64_t number, const std::string& id) {
  auto it = events_.find(number);
  if (it == events_.end()) {
    it = events_.emplace(number, EventHistory(id, &layouts_)).first;
    held_.bytes += it->second.bytes() + kEventBytes;
  }
  return it->second;
}

template <class F>
bool HistoryStore::guarded(F&& fn) {
  try {
    fn();
    return true;
  } catch (const std::length_error& e) {
    clear_locked();
    overflowed_ = true;
    ++overflows_;
    std::fprintf(stderr, "oddsrelay: %s; the odds history starts again\n", e.what());
    return false;
  }
}

void HistoryStore::seed(const Snapshot& snap) {
  std::unique_lock lock(mu_);
  overflowed_ = false;
  guarded([&] { seed_locked(snap); });
}

void HistoryStore::seed_locked(const Snapshot& snap) {
  if (snap.seq == 0) return;  // the log's start: nothing came before
  const size_t layouts_before = layouts_.bytes();
  snap.events.for_each([&](const EventEntry& e) {
    if (!e.listed() && e.markets.empty()) return;  // scores only: no history either
    EventHistory& h = entry(e.number, e.key);
    for (const MarketRef& m : e.markets) held_.bytes += static_cast<uint64_t>(h.seed_market(*m, snap.seq));
    h.seed_listing(e.listed(), e.live(), snap.seq);
  });
  held_.epoch = snap.epoch;
  held_.seq = snap.seq;
  held_.clock = snap.feed_clock;
  held_.held_from = snap.feed_clock;  // roughly: the feed may go back in time
  held_.held_from_seq = seeded_seq_ = snap.seq + 1;
  held_.events = events_.size();
  held_.bytes += layouts_.bytes() - layouts_before;
}

void HistoryStore::clear() {
  std::unique_lock lock(mu_);
  clear_locked();
  overflowed_ = false;
}

void HistoryStore::clear_locked() {
  events_.clear();
  clock_ = ClockIndex();
  layouts_ = LayoutTable(~uint64_t{0}, layouts_.max_lines());
  held_ = HeldState{};
  cut_seq_ = first_seq_ = seeded_seq_ = 0;
}

void HistoryStore::apply(const Batch& batch) { apply_from(batch, batch.first_seq); }

void HistoryStore::apply_from(const Batch& batch, uint64_t from) {
  std::unique_lock lock(mu_);
  if (batch.reset) {
    // The state was replaced (an edge rejoined after a hole in the log):
    // the records between are not known here, so what is held starts again
    // from the new state, as at a join.
    clear_locked();
    held_.epoch = batch.snapshot->epoch;
    held_.seq = batch.snapshot->seq;
    overflowed_ = false;
    guarded([&] { seed_locked(*batch.snapshot); });
    return;
  }
  const size_t skip = from > batch.first_seq ? std::min<size_t>(from - batch.first_seq, batch.records.size()) : 0;
  if (overflowed_) return;  // a state that itself named too many line keys: empty until seed() or clear()
  if (guarded([&] {
        apply_locked(batch.first_seq + skip, std::span<const feed::Record>(batch.records).subspan(skip), evicted(batch),
                     batch.snapshot->seq, batch.snapshot->epoch);
      }))
    return;
  // Starts again from the state the batch left; failing that, stays empty.
  overflowed_ = false;
  guarded([&] { seed_locked(*batch.snapshot); });
}

void HistoryStore::apply(const LoggedBatch& batch, const std::string& epoch) {
  std::unique_lock lock(mu_);
  if (!overflowed_) guarded([&] { apply_locked(batch.first_seq, batch.records, batch.evicted, batch.seq, epoch); });
}

std::vector<uint64_t> HistoryStore::evicted(const Batch& batch) {
  std::vector<uint64_t> out;
  for (const EventChange& c : batch.changes)
    if ((c.bits & kEventEvicted) && !batch.snapshot->events.find(c.number)) out.push_back(c.number);
  return out;
}

const EventHistory* HistoryStore::ahead(const feed::Record& r) const {
  if (r.op() != feed::Op::Market) return nullptr;
  auto it = events_.find(r.number);
  if (it == events_.end()) return nullptr;
  const EventHistory* h = &it->second;
  __builtin_prefetch(h);
  __builtin_prefetch(reinterpret_cast<const char*>(h) + 64);
  return h;
}

void HistoryStore::apply_record(const feed::Record& r, uint64_t seq) {
  held_.bytes += static_cast<uint64_t>(clock_.add(r.at, seq));
  held_.clock = std::max(held_.clock, r.at);
  switch (r.op()) {
    case feed::Op::Market: {
      EventHistory& h = entry(r.number, r.id);
      const uint64_t points = h.points();
      held_.bytes += static_cast<uint64_t>(h.on_market(std::get<feed::MarketRec>(r.body), r.at, seq));
      held_.points += h.points() - points;
      break;
    }
    case feed::Op::Event: {
      const auto& obj = std::get<std::shared_ptr<const feed::EventObject>>(r.body);
      entry(r.number, r.id).on_event(r.id, obj && obj->live, seq);
      break;
    }
    case feed::Op::Remove:
      if (auto it = events_.find(r.number); it != events_.end()) {
        const uint64_t points = it->second.points();
        held_.bytes += static_cast<uint64_t>(it->second.on_remove(r.at, seq));
        held_.points += it->second.points() - points;
      }
      break;
    default:
      break;
  }
}

void HistoryStore::apply_locked(uint64_t first_seq, std::span<const feed::Record> records,
                                const std::vector<uint64_t>& evicted, uint64_t seq, const std::string& epoch) {
  held_.epoch = epoch;
  if (first_seq_ == 0) first_seq_ = first_seq;
  const size_t layouts_before = layouts_.bytes();
  // Each market record's event is looked up kFind records before it is
  // applied, and the levels under it fetched kHeads, kMarket and kOutcomes
  // records before (EventHistory::fetch_*), as the segments' writer does
  // (segment_codec.h). An event an earlier record of the batch makes is
  // not fetched; a history's node does not move while others are added,
  // and none goes before the batch's end.
  constexpr size_t kFind = 12, kHeads = 8, kMarket = 4, kOutcomes = 2;
  const size_t n = records.size();
  ahead_.assign(n, nullptr);
  for (size_t i = 0; i < std::min(n, kFind); ++i) ahead_[i] = ahead(records[i]);
  auto market_of = [&](size_t i) { return std::get<feed::MarketRec>(records[i].body).market; };
  for (size_t i = 0; i < n; ++i) {
    if (i + kFind < n) ahead_[i + kFind] = ahead(records[i + kFind]);
    if (i + kHeads < n && ahead_[i + kHeads]) ahead_[i + kHeads]->fetch_heads();
    if (i + kMarket < n && ahead_[i + kMarket]) ahead_[i + kMarket]->fetch_market(market_of(i + kMarket));
    if (i + kOutcomes < n && ahead_[i + kOutcomes]) ahead_[i + kOutcomes]->fetch_outcomes(market_of(i + kOutcomes));
    apply_record(records[i], first_seq++);
  }
  held_.bytes += layouts_.bytes() - layouts_before;  // layouts stay: they are shared
  // Evicted at the horizon: the history goes with the event.
  for (uint64_t number : evicted) {
    if (auto it = events_.find(number); it != events_.end()) {
      held_.bytes -= it->second.bytes() + kEventBytes;
      held_.points -= it->second.points();
      events_.erase(it);
    }
  }
  held_.seq = std::max(held_.seq, seq);
  held_.events = events_.size();
  enforce_bound();
}

// Past the bound, the oldest points go: every series is cut before a seq an
// eighth of the held span further on, until the history is under 7/8 of
// the bound (so that a cut, which rewrites every series it touches, is
// rare).
void HistoryStore::enforce_bound() {
  if (held_.bytes <= max_bytes_) return;
  const uint64_t target = max_bytes_ / 8 * 7;
  uint64_t lo = std::max(cut_seq_, first_seq_);
  while (held_.bytes > target && lo < held_.seq) {
    const uint64_t cut = lo + std::max<uint64_t>(1, (held_.seq - lo) / 8);
    for (auto it = events_.begin(); it != events_.end();) {
      held_.bytes -= static_cast<uint64_t>(it->second.cut_before(cut));
      if (!it->second.idle()) {
        ++it;
        continue;
      }
      held_.bytes -= it->second.bytes() + kEventBytes;
      it = events_.erase(it);
    }
    held_.bytes -= clock_.cut_before(cut);
    lo = cut_seq_ = cut;
  }
  held_.held_from_seq = std::max(cut_seq_, seeded_seq_);
  int64_t oldest = INT64_MAX;
  uint64_t points = 0;
  for (auto& [number, h] : events_) {
    oldest = std::min(oldest, h.oldest_ts());
    points += h.points();
  }
  held_.points = points;
  held_.events = events_.size();
  held_.held_from = oldest == INT64_MAX ? held_.clock : oldest;
}

void HistoryStore::read(uint64_t number, const std::function<void(const EventHistory*, const HeldState&)>& fn) const {
  std::shared_lock lock(mu_);
  auto it = events_.find(number);
  fn(it == events_.end() ? nullptr : &it->second, held_);
}

void HistoryStore::read_many(
    const std::vector<uint64_t>& numbers,
    const std::function<void(const std::vector<const EventHistory*>&, const HeldState&)>& fn) const {
  std::shared_lock lock(mu_);
  std::vector<const EventHistory*> hs;
  hs.reserve(numbers.size());
  for (uint64_t n : numbers) {
    auto it = events_.find(n);
    hs.push_back(it == events_.end() ? nullptr : &it->second);
  }
  fn(hs, held_);
}

uint64_t HistoryStore::seq_at(int64_t at) const { return clock_.seq_at(at, held_.seq); }

HeldState HistoryStore::state() const {
  std::shared_lock lock(mu_);
  return held_;
}

HistoryBytes HistoryStore::breakdown() const {
  std::shared_lock lock(mu_);
  HistoryBytes b;
  b.events = events_.size() * kEventBytes;
  for (const auto& [number, h] : events_) h.add_bytes(b);
  b.clock = clock_.bytes();
  b.layouts_bytes += layouts_.bytes();
  return b;
}

}  // namespace oddsrelay::history
