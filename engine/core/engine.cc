#include "engine/core/engine.h"

#include <time.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>

#include "protocol/clock.h"

namespace oddsrelay {

namespace {

// Past the first `ended` record: the last read before full time is taken.
bool ended(const EventEntry& e) { return e.ended; }

// The state's counts of what it holds (Snapshot::bytes, markets, outcomes:
// /v1/status shows them; the retention tests hold bytes equal to the sum
// of entry_bytes) move only through these and count_entry: each part's
// size is its own (engine/core/retention.h), and apply says what it
// replaced, never how many bytes that was.
size_t part_bytes(const feed::EventObject* p) { return info_bytes(p); }
size_t part_bytes(const ScoreState* p) { return score_bytes(p); }
size_t part_bytes(const StatsState* p) { return stats_bytes(p); }

template <class T>
void replace_part(Snapshot& s, std::shared_ptr<const T>& slot, std::type_identity_t<std::shared_ptr<const T>> v) {
  s.bytes += part_bytes(v.get()) - part_bytes(slot.get());
  slot = std::move(v);
}

// The score is set only here (and by restore_entry), so the entry's copy of
// its `ended` never disagrees with it.
void replace_score(Snapshot& s, EventEntry& e, std::shared_ptr<const ScoreState> v) {
  replace_part(s, e.score, std::move(v));
  e.ended = e.score && e.score->ended;
}

// A market joining (+1) or leaving (-1) an entry's list: the state's
// counts and the entry's odds digest move together.
void count_market(Snapshot& s, EventEntry& e, const Market& m, int sign) {
  if (sign > 0) {
    s.outcomes += m.outcomes.size();
    s.bytes += market_bytes(m);
    ++s.markets;
    e.odds_digest += m.digest;
  } else {
    s.outcomes -= m.outcomes.size();
    s.bytes -= market_bytes(m);
    --s.markets;
    e.odds_digest -= m.digest;
  }
}

// The line history says how much it grew (line_history.h).
void count_history(Snapshot& s, int64_t grew) { s.bytes += static_cast<uint64_t>(grew); }

}  // namespace

EventEntry& Engine::entry_for(uint64_t number, const std::string& id, int64_t at) {
  auto& slot = work_.events.slot(number, edit_);
  if (!slot) {
    slot = std::make_shared<EventEntry>();
    slot->number = number;
    slot->key = id;
    work_.bytes += kEntryBytes;
    if (!gone_.empty())
      if (auto it = gone_.find(number); it != gone_.end()) slot->change = it->second;
  } else {
    if (slot->edit != edit_) {
      slot = std::make_shared<EventEntry>(*slot);
      slot->change = 0;
    }
  }
  // An emptied entry waiting to be dropped at commit is a new event to this
  // record, as it would be in a later batch: it takes this record's id.
  if (slot->empty()) slot->key = id;
  slot->edit = edit_;
  slot->updated_at = at;
  touched_ = slot.get();
  return *slot;
}

EventChange& Engine::change_for(EventEntry& e) {
  if (e.change == 0) {
    changes_.emplace_back();
    changes_.back().number = e.number;
    e.change = static_cast<uint32_t>(changes_.size());
  }
  return changes_[e.change - 1];
}

void Engine::note_market(EventEntry& e, uint32_t market) {
  change_for(e).bits |= kOddsChanged;
  changed_markets_.emplace_back(e.change - 1, market);
}

void Engine::count_listing(const EventEntry& e, int delta) {
  if (!e.listed()) return;
  auto& v = work_.sports;
  auto it = std::lower_bound(v.begin(), v.end(), e.sport(), [](const SportCount& c, int32_t s) { return c.sport < s; });
  if (it == v.end() || it->sport != e.sport()) it = v.insert(it, SportCount{e.sport(), 0, 0});
  (e.live() ? it->live : it->prematch) += delta;
  (e.live() ? work_.listed_live : work_.listed_prematch) += delta;
  if (e.score && e.score->ended) (e.live() ? work_.ended_live : work_.ended_prematch) += delta;
  if (it->live == 0 && it->prematch == 0) v.erase(it);
}

void Engine::note_listing(EventChange& ch, const EventEntry& e, int32_t old_sport, bool old_live) {
  if (e.listed()) {
    ch.sport = e.sport();
    ch.live = e.live();
  } else if (old_sport != 0) {
    ch.sport = old_sport;
    ch.live = old_live;
  }
}

void Engine::apply_event(feed::Record& rec) {
  EventEntry& e = entry_for(rec.number, rec.id, rec.at);
  const int32_t old_sport = e.sport();
  const bool old_live = e.live(), was_listed = e.listed();
  auto& info = std::get<std::shared_ptr<const feed::EventObject>>(rec.body);
  EventChange& ch = change_for(e);
  if (!was_listed)
    ch.bits |= kEventAdded;
  else if (e.info->json != info->json)
    ch.bits |= kEventChanged;
  count_listing(e, -1);
  replace_part(work_, e.info, info);
  e.key = rec.id;
  count_listing(e, +1);
  if (old_live || e.live()) work_.last_live_at = rec.at;
  note_listing(ch, e, old_sport, old_live);
}

ApplyResult Engine::apply_remove(feed::Record& rec) {
  // An entry with nothing left (an earlier remove of this batch emptied it;
  // it is dropped at commit) counts as unknown, exactly as it will once
  // committed: the outcome must not depend on where batches fall.
  const EventEntry* cur = work_.events.find(rec.number);
  if (!cur || cur->empty()) return ApplyResult::SkippedUnknownEvent;
  EventEntry& e = entry_for(rec.number, rec.id, rec.at);
  const int32_t old_sport = e.sport();
  const bool old_live = e.live();
  EventChange& ch = change_for(e);
  if (e.listed()) ch.bits |= kEventRemoved;
  if (old_live) work_.last_live_at = rec.at;
  count_listing(e, -1);
  // A score shown with the event's kickoff (its records carried none) keeps
  // it once the event object is gone: settlement reads scores after removal.
  if (e.score && !e.score->last.kickoff && e.info) {
    auto s = std::make_shared<ScoreState>(*e.score);
    s->last.kickoff = e.info->ts;
    replace_score(work_, e, std::move(s));
  }
  replace_part(work_, e.info, nullptr);
  for (const auto& m : e.markets) {
    if (!ended(e)) count_history(work_, history_on_removal(e.history, edit_, *m));
    count_market(work_, e, *m, -1);
    note_market(e, m->id);
  }
  e.markets.clear();
  e.odds_digest = 0;  // what count_market left, unless a restored entry's digest was off
  note_listing(ch, e, old_sport, old_live);
  // Score and stats outlive the listing (settlement asks after removal,
  // until the retention horizon); with neither, nothing is worth keeping:
  // track_touched() drops the entry.
  return ApplyResult::Applied;
}

void Engine::apply_market(feed::Record& rec) {
  auto& mr = std::get<feed::MarketRec>(rec.body);
  EventEntry& e = entry_for(rec.number, rec.id, rec.at);
  auto& ms = e.markets;
  auto it =
      std::lower_bound(ms.begin(), ms.end(), mr.market, [](const MarketRef& m, uint32_t id) { return m.id < id; });
  const bool exists = it != ms.end() && it->id == mr.market;
  if (exists) count_market(work_, e, **it, -1);
  // Until full time, lines that go are kept with their last read (the
  // history is frozen at the first `ended`, with the odds then current).
  const Market* prev = exists ? it->ptr.get() : nullptr;
  if (mr.lines.empty()) {
    if (prev && !ended(e)) count_history(work_, history_on_removal(e.history, edit_, *prev));
    if (exists) ms.erase(it);
  } else {
    MarketPtr m = build_market(mr, prev, rec.at, rec.number);
    if (!ended(e)) count_history(work_, history_on_market(e.history, edit_, prev, *m));
    count_market(work_, e, *m, +1);
    if (exists)
      it->ptr = std::move(m);
    else
      ms.insert(it, MarketRef{mr.market, std::move(m)});
  }
  note_market(e, mr.market);
  // A market record does not change the listing: once this batch's change
  // holds the event's sport (every record that changes a listing notes it
  // again), reading the event object (a cache miss a record) is skipped.
  EventChange& ch = change_for(e);
  if (e.listed() && ch.sport == 0) note_listing(ch, e, e.sport(), e.live());
}

void Engine::apply_score(feed::Record& rec) {
  auto& sr = rec.score();
  EventEntry& e = entry_for(rec.number, rec.id, rec.at);
  auto s = e.score ? std::make_shared<ScoreState>(*e.score) : std::make_shared<ScoreState>();
  EventChange& ch = change_for(e);
  ch.bits |= kScoreChanged;
  if (sr.home && sr.away &&
      (s->timeline.empty() || s->timeline.back().home != *sr.home || s->timeline.back().away != *sr.away)) {
    if (s->timeline.size() >= ScoreState::kTimelineMax) s->timeline.erase(s->timeline.begin());
    s->timeline.push_back(ScorePoint{rec.at, *sr.home, *sr.away, sr.clock.value_or("")});
  }
  const std::optional<int64_t> kickoff = s->last.kickoff;
  s->last = sr;
  // Unlisted, a record without a kickoff keeps the one known before (the
  // event's, kept at its removal).
  if (!s->last.kickoff && !e.info) s->last.kickoff = kickoff;
  s->ts = rec.at;
  if (sr.status == feed::ScoreStatus::Ended) {
    std::optional<std::pair<int32_t, int32_t>> score;
    if (sr.home && sr.away) score = std::make_pair(*sr.home, *sr.away);
    auto result = sr.result == feed::MatchResult::None ? feed::MatchResult::Completed : sr.result;
    const bool first = !s->ended;
    // The first `ended` fixes the final; a later one that differs is a
    // correction (docs/settlement.md rules 1 and 9); an equal one is a no-op.
    if (first || score != s->final_score || result != s->final_result) {
      if (first) {
        s->ended = true;
        ch.ended = true;
        s->odds_at_end = e.markets;
        count_history(work_, history_on_end(e.history, edit_));
        ++work_.ended;
        if (e.listed()) ++(e.live() ? work_.ended_live : work_.ended_prematch);
      }
      ++s->final_version;
      s->final_score = score;
      s->final_result = result;
      s->final_at = rec.at;
      ch.bits |= kFinalChanged;
    }
  }
  replace_score(work_, e, std::move(s));
  note_listing(ch, e, e.sport(), e.live());
}

void Engine::apply_stats(feed::Record& rec) {
  auto& sr = rec.stats();
  EventEntry& e = entry_for(rec.number, rec.id, rec.at);
  auto s = e.stats ? std::make_shared<StatsState>(*e.stats) : std::make_shared<StatsState>();
  for (size_t i = 0; i < sr.values.size(); ++i)
    if (sr.values[i]) s->values[i] = sr.values[i];
  s->final = s->final || sr.final;
  s->ts = rec.at;
  replace_part(work_, e.stats, std::move(s));
  EventChange& ch = change_for(e);
  ch.bits |= kStatsChanged;
  note_listing(ch, e, e.sport(), e.live());
}

ApplyResult Engine::apply(feed::Record&& rec) {
  if (records_.size() > held_)
    records_[held_] = std::move(rec);
  else
    records_.push_back(std::move(rec));
  const ApplyResult r = apply_held(records_[held_]);
  if (r == ApplyResult::Applied) ++held_;
  return r;
}

// The slots past held_ stay in records_ from one intake to the next (moved
// from, or never filled) and are only assigned to again: a dequeue that
// finds a few records does not construct and destroy a batch_max of them.
// Seal trims them.
feed::Record* Engine::intake(size_t n) {
  if (records_.size() < held_ + n) records_.resize(held_ + n);
  return records_.data() + held_;
}

void Engine::apply_intake(size_t filled) {
  // A skipped record leaves a gap: the applied ones after it move down,
  // so records_[0..held_) are exactly the applied records, in order.
  const size_t end = held_ + filled;
  for (size_t i = held_; i < end; ++i) {
    if (apply_held(records_[i]) != ApplyResult::Applied) continue;
    if (held_ != i) records_[held_] = std::move(records_[i]);
    ++held_;
  }
}

ApplyResult Engine::apply_held(feed::Record& rec) {
  ApplyResult r = ApplyResult::Applied;
  touched_ = nullptr;
  switch (rec.op()) {
    case feed::Op::Event:
      apply_event(rec);
      break;
    case feed::Op::Remove:
      r = apply_remove(rec);
      break;
    case feed::Op::Market:
      apply_market(rec);
      break;
    case feed::Op::Score:
      apply_score(rec);
      break;
    case feed::Op::Stats:
      apply_stats(rec);
      break;
  }
  if (r != ApplyResult::Applied) {
    skipped_.store(skipped_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    return r;
  }
  work_.clock = rec.at;
  work_.feed_clock = std::max(work_.feed_clock, rec.at);
  ++work_.seq;
  newest_at_ = std::max(newest_at_, rec.at);
  if (rec.arrived_ns && (first_arrived_ns_ == 0 || rec.arrived_ns < first_arrived_ns_))
    first_arrived_ns_ = rec.arrived_ns;
  // One writer: a plain store, not a locked add (readers only need a recent value).
  applied_.store(applied_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  track_touched();
  evict_due();
  return r;
}

void Engine::track_touched() {
  EventEntry* e = std::exchange(touched_, nullptr);
  if (!e) return;
  if (e->empty()) return drop_entry(e->number, false);
  if (!retirable(*e))
    unindex(*e);
  else if (e->retire_at == EventEntry::kNotRetiring || e->updated_at < e->retire_at)
    index(*e);  // new to the index, or its feed went back in time: an earlier position
}

void Engine::evict_due() {
  int64_t at;
  uint64_t n;
  while (retiring_.take_due(work_.feed_clock, work_.retain_ended_ms, at, n)) {
    const EventEntry* e = work_.events.find(n);
    if (!e || e->retire_at != at) continue;  // stale: the event left, or was indexed again since
    if (e->updated_at != at)
      index(*e);  // a newer record since: its place is at that record
    else
      drop_entry(n, true);
  }
}

// Takes an entry out of the state like a `remove` would take its listing,
// and says so in the batch's change set: a listed event leaves the lists
// (so /pt-ws sends null), its markets go.
void Engine::drop_entry(uint64_t number, bool evicted) {
  const EventEntry* e = work_.events.find(number);
  if (!e) return;
  uint32_t ci = e->edit == edit_ ? e->change : 0;  // an older entry's index is of another batch
  if (ci == 0) {
    changes_.emplace_back();
    changes_.back().number = number;
    ci = static_cast<uint32_t>(changes_.size());
  }
  EventChange& ch = changes_[ci - 1];
  if (e->listed()) {
    ch.bits |= kEventRemoved;
    ch.sport = e->sport();
    ch.live = e->live();
    if (e->live()) work_.last_live_at = work_.clock;
  }
  if (evicted) ch.bits |= kEventEvicted;
  if (!e->markets.empty()) ch.bits |= kOddsChanged;
  for (const MarketRef& m : e->markets) changed_markets_.emplace_back(ci - 1, m.id);
  unindex(*e);
  count_entry(*e, -1);
  if (evicted) ++work_.evicted;
  gone_[number] = ci;
  work_.events.erase(number, edit_);
}

void Engine::count_entry(const EventEntry& e, int delta) {
  auto add = [delta](uint64_t& v, uint64_t n) { v = delta > 0 ? v + n : v - n; };
  count_listing(e, delta);
  uint64_t outcomes = 0;
  for (const auto& m : e.markets) outcomes += m->outcomes.size();
  add(work_.outcomes, outcomes);
  add(work_.markets, e.markets.size());
  if (e.score && e.score->ended) add(work_.ended, 1);
  add(work_.bytes, entry_bytes(e));
}

BatchPtr Engine::commit() {
  BatchPtr b = seal();
  if (b) publish(b);
  return b;
}

void Engine::restore_entry(EventEntry&& entry) {
  auto& slot = work_.events.slot(entry.number, edit_);
  if (slot) {  // replacing: undo its counts first
    unindex(*slot);
    count_entry(*slot, -1);
  }
  entry.edit = edit_;
  entry.change = 0;
  slot = std::make_shared<EventEntry>(std::move(entry));
  slot->ended = slot->score && slot->score->ended;
  slot->retire_at = EventEntry::kNotRetiring;
  count_entry(*slot, +1);
  if (retirable(*slot)) index(*slot);
}

void Engine::restore_position(const Position& p) {
  work_.seq = p.seq;
  work_.clock = p.clock;
  work_.feed_clock = p.feed_clock;
  work_.last_live_at = p.last_live_at;
  work_.evicted = p.evicted;
}

void Engine::publish_restored() {
  ++edit_;  // what the published snapshot holds is shared from here on
  store_.publish(std::make_shared<const Snapshot>(work_));
}

BatchPtr Engine::replace_state(Engine& other) {
  const int64_t horizon = work_.retain_ended_ms;
  work_ = std::move(other.work_);
  work_.retain_ended_ms = horizon;
  retiring_ = std::move(other.retiring_);
  other.work_ = Snapshot{};
  other.retiring_ = RetentionIndex{};
  changes_.clear();
  changed_markets_.clear();
  gone_.clear();
  records_.clear();
  held_ = 0;
  newest_at_ = 0;
  first_arrived_ns_ = 0;
  touched_ = nullptr;
  // The new state's nodes carry `other`'s batch numbers: past both engines'
  // numbers, every one of them counts as shared from here on.
  edit_ = std::max(edit_, other.edit_) + 1;
  auto batch = std::make_shared<Batch>();
  batch->reset = true;
  batch->first_seq = work_.seq + 1;
  batch->snapshot = std::make_shared<const Snapshot>(work_);
  ++edit_;
  return batch;
}

// Groups the changed market ids by change, sorted and unique within each,
// in change order. A counting sort: a catch-up batch notes 65,536 of them,
// and one sort of all the pairs was 4% of apply in its profile; each
// change's own few ids are then sorted in place.
void Engine::group_markets(Batch& batch) {
  for (auto [ci, id] : changed_markets_) ++changes_[ci].markets_count;
  uint32_t at = 0;
  for (EventChange& c : changes_) {
    c.markets_first = at;
    at += std::exchange(c.markets_count, 0);
  }
  auto& out = batch.markets;
  out.resize(at);
  for (auto [ci, id] : changed_markets_) {
    EventChange& c = changes_[ci];
    out[c.markets_first + c.markets_count++] = id;
  }
  changed_markets_.clear();
  uint32_t kept = 0;
  for (EventChange& c : changes_) {
    const auto first = out.begin() + c.markets_first;
    std::sort(first, first + c.markets_count);
    const auto n = static_cast<uint32_t>(std::unique(first, first + c.markets_count) - first);
    // Moves left over ids already placed: `kept` never passes markets_first.
    for (uint32_t i = 0; i < n; ++i) out[kept + i] = out[c.markets_first + i];
    c.markets_first = n ? kept : 0;
    c.markets_count = n;
    kept += n;
  }
  out.resize(kept);
}

BatchPtr Engine::seal(int64_t apply_start_ns, bool catch_up) {
  if (held_ == 0) return nullptr;
  records_.resize(std::exchange(held_, 0));  // the spare slots of the last intake go
  gone_.clear();
  auto batch = std::make_shared<Batch>();
  batch->apply_start_ns = apply_start_ns;
  batch->catch_up = catch_up;
  batch->first_seq = work_.seq - records_.size() + 1;
  batch->newest_at = std::exchange(newest_at_, 0);
  group_markets(*batch);
  batch->snapshot = std::make_shared<const Snapshot>(work_);
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  batch->sealed_us = static_cast<int64_t>(now.tv_sec) * 1'000'000 + now.tv_nsec / 1000;
  if (const int64_t first = std::exchange(first_arrived_ns_, 0))
    batch->arrived_us = batch->sealed_us - std::max<int64_t>(0, mono_ns() - first) / 1000;
  const size_t nchanges = changes_.size(), nrecords = records_.size();
  batch->changes = std::move(changes_);
  batch->records = std::move(records_);
  // Moved-from vectors start empty; size them like this batch so the next
  // one does not regrow them step by step.
  changes_ = {};
  records_ = {};
  changes_.reserve(nchanges);
  records_.reserve(nrecords);
  ++edit_;  // from here on, every node the snapshot holds is shared: copy before writing
  return batch;
}

}  // namespace oddsrelay
