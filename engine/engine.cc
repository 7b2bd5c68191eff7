#include "engine/engine.h"

#include <algorithm>

namespace oddsrelay {

const Market* OddsTable::find(uint32_t market_id) const {
  auto it = std::lower_bound(markets.begin(), markets.end(), market_id,
                             [](const MarketPtr& m, uint32_t id) { return m->id < id; });
  return it != markets.end() && (*it)->id == market_id ? it->get() : nullptr;
}

namespace {

// Builds the served market from a record, carrying each unchanged outcome's
// ts over from `prev`. Lines and outcomes usually keep their positions from
// one record to the next, so the same index is tried before a scan.
MarketPtr build_market(const feed::MarketRec& rec, const Market* prev, int64_t at) {
  auto m = std::make_shared<Market>();
  m->id = rec.market;
  m->lines.reserve(rec.lines.size());
  m->outcomes.reserve(rec.outcomes.size());
  for (size_t li = 0; li < rec.lines.size(); ++li) {
    const feed::LineIn& in = rec.lines[li];
    Line line;
    line.key = LineKey(in.key);
    line.suspended = in.suspended;
    line.first = static_cast<uint32_t>(m->outcomes.size());
    line.count = in.count;
    line.ls = at;
    const Line* pl = nullptr;
    if (prev) {
      if (li < prev->lines.size() && prev->lines[li].key == line.key) pl = &prev->lines[li];
      else
        for (const Line& c : prev->lines)
          if (c.key == line.key) { pl = &c; break; }
    }
    for (uint32_t oi = 0; oi < in.count; ++oi) {
      const feed::OutcomeIn& o = rec.outcomes[in.first + oi];
      Outcome out{o.id, o.price, o.flags, at};
      if (pl) {
        const Outcome* po = nullptr;
        if (oi < pl->count && prev->outcomes[pl->first + oi].id == o.id) po = &prev->outcomes[pl->first + oi];
        else
          for (uint32_t k = 0; k < pl->count; ++k)
            if (prev->outcomes[pl->first + k].id == o.id) { po = &prev->outcomes[pl->first + k]; break; }
        if (po && po->price == o.price && po->flags == o.flags) out.ts = po->ts;
      }
      m->outcomes.push_back(out);
    }
    m->lines.push_back(line);
  }
  return m;
}

}  // namespace

EventEntry& Engine::entry_for(uint64_t number, const std::string& id, int64_t at) {
  auto& slot = work_.events.slot(number, edit_);
  if (!slot) {
    slot = std::make_shared<EventEntry>();
    slot->number = number;
    slot->key = id;
  } else if (slot->edit != edit_) {
    slot = std::make_shared<EventEntry>(*slot);
  }
  slot->edit = edit_;
  slot->updated_at = at;
  return *slot;
}

OddsTable& Engine::odds_for(EventEntry& e) {
  std::shared_ptr<OddsTable> t;
  if (!e.odds) t = std::make_shared<OddsTable>();
  else if (e.odds->edit == edit_) return const_cast<OddsTable&>(*e.odds);  // ours: unpublished
  else t = std::make_shared<OddsTable>(*e.odds);
  t->edit = edit_;
  e.odds = t;
  return *t;
}

EventChange& Engine::change_for(uint64_t number) {
  auto [it, fresh] = change_index_.try_emplace(number, changes_.size());
  if (fresh) {
    changes_.emplace_back();
    changes_.back().number = number;
  }
  return changes_[it->second];
}

void Engine::count_listing(const EventEntry& e, int delta) {
  if (!e.listed()) return;
  auto& v = work_.sports;
  auto it = std::lower_bound(v.begin(), v.end(), e.sport(),
                             [](const SportCount& c, int32_t s) { return c.sport < s; });
  if (it == v.end() || it->sport != e.sport()) it = v.insert(it, SportCount{e.sport(), 0, 0});
  (e.live() ? it->live : it->prematch) += delta;
  (e.live() ? work_.listed_live : work_.listed_prematch) += delta;
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
  EventChange& ch = change_for(rec.number);
  if (!was_listed) ch.bits |= kEventAdded;
  else if (e.info->json != info->json) ch.bits |= kEventChanged;
  count_listing(e, -1);
  e.info = info;
  e.key = rec.id;
  count_listing(e, +1);
  if (old_live || e.live()) work_.last_live_at = rec.at;
  note_listing(ch, e, old_sport, old_live);
}

ApplyResult Engine::apply_remove(feed::Record& rec) {
  const EventEntry* cur = work_.events.find(rec.number);
  if (!cur) return ApplyResult::SkippedUnknownEvent;
  EventEntry& e = entry_for(rec.number, rec.id, rec.at);
  const int32_t old_sport = e.sport();
  const bool old_live = e.live();
  EventChange& ch = change_for(rec.number);
  if (e.listed()) ch.bits |= kEventRemoved;
  if (old_live) work_.last_live_at = rec.at;
  count_listing(e, -1);
  e.info = nullptr;
  if (e.odds) {
    for (const auto& m : e.odds->markets) {
      work_.outcomes -= m->outcomes.size();
      ch.markets.push_back(m->id);
    }
    work_.markets -= e.odds->markets.size();
    ch.bits |= kOddsChanged;
    e.odds = nullptr;
  }
  note_listing(ch, e, old_sport, old_live);
  // Score and stats outlive the listing (settlement asks after removal);
  // with neither, nothing of the event is worth keeping.
  if (!e.score && !e.stats) work_.events.erase(rec.number, edit_);
  return ApplyResult::Applied;
}

void Engine::apply_market(feed::Record& rec) {
  auto& mr = std::get<feed::MarketRec>(rec.body);
  EventEntry& e = entry_for(rec.number, rec.id, rec.at);
  OddsTable& t = odds_for(e);
  auto it = std::lower_bound(t.markets.begin(), t.markets.end(), mr.market,
                             [](const MarketPtr& m, uint32_t id) { return m->id < id; });
  const bool exists = it != t.markets.end() && (*it)->id == mr.market;
  if (exists) {
    work_.outcomes -= (*it)->outcomes.size();
    --work_.markets;
  }
  if (mr.lines.empty()) {
    if (exists) t.markets.erase(it);
  } else {
    MarketPtr m = build_market(mr, exists ? it->get() : nullptr, rec.at);
    work_.outcomes += m->outcomes.size();
    ++work_.markets;
    if (exists) *it = std::move(m);
    else t.markets.insert(it, std::move(m));
  }
  if (t.markets.empty()) e.odds = nullptr;
  EventChange& ch = change_for(rec.number);
  ch.bits |= kOddsChanged;
  auto pos = std::lower_bound(ch.markets.begin(), ch.markets.end(), mr.market);
  if (pos == ch.markets.end() || *pos != mr.market) ch.markets.insert(pos, mr.market);
  note_listing(ch, e, e.sport(), e.live());
}

void Engine::apply_score(feed::Record& rec) {
  auto& sr = std::get<feed::ScoreRec>(rec.body);
  EventEntry& e = entry_for(rec.number, rec.id, rec.at);
  auto s = e.score ? std::make_shared<ScoreState>(*e.score) : std::make_shared<ScoreState>();
  EventChange& ch = change_for(rec.number);
  ch.bits |= kScoreChanged;
  s->last = sr;
  s->ts = rec.at;
  if (sr.status == feed::ScoreStatus::Ended) {
    std::optional<std::pair<int32_t, int32_t>> score;
    if (sr.home && sr.away) score = std::make_pair(*sr.home, *sr.away);
    auto result = sr.result == feed::MatchResult::None ? feed::MatchResult::Completed : sr.result;
    const bool first = !s->ended;
    // The first `ended` fixes the final; a later one that differs is a
    // correction (SPEC.md settlement rules 1 and 9); an equal one is a no-op.
    if (first || score != s->final_score || result != s->final_result) {
      if (first) {
        s->ended = true;
        s->odds_at_end = e.odds;
      }
      ++s->final_version;
      s->final_score = score;
      s->final_result = result;
      s->final_at = rec.at;
      ch.bits |= kFinalChanged;
    }
  }
  e.score = std::move(s);
  note_listing(ch, e, e.sport(), e.live());
}

void Engine::apply_stats(feed::Record& rec) {
  auto& sr = std::get<feed::StatsRec>(rec.body);
  EventEntry& e = entry_for(rec.number, rec.id, rec.at);
  auto s = e.stats ? std::make_shared<StatsState>(*e.stats) : std::make_shared<StatsState>();
  for (size_t i = 0; i < sr.values.size(); ++i)
    if (sr.values[i]) s->values[i] = sr.values[i];
  s->final = s->final || sr.final;
  s->ts = rec.at;
  e.stats = std::move(s);
  EventChange& ch = change_for(rec.number);
  ch.bits |= kStatsChanged;
  note_listing(ch, e, e.sport(), e.live());
}

ApplyResult Engine::apply(feed::Record&& rec) {
  ApplyResult r = ApplyResult::Applied;
  switch (rec.op()) {
    case feed::Op::Event: apply_event(rec); break;
    case feed::Op::Remove: r = apply_remove(rec); break;
    case feed::Op::Market: apply_market(rec); break;
    case feed::Op::Score: apply_score(rec); break;
    case feed::Op::Stats: apply_stats(rec); break;
  }
  if (r != ApplyResult::Applied) {
    skipped_.fetch_add(1, std::memory_order_relaxed);
    return r;
  }
  work_.clock = rec.at;
  records_.push_back(std::move(rec));
  applied_.fetch_add(1, std::memory_order_relaxed);
  return r;
}

BatchPtr Engine::commit() {
  if (records_.empty()) return nullptr;
  work_.seq = edit_;
  auto batch = std::make_shared<Batch>();
  batch->snapshot = std::make_shared<const Snapshot>(work_);
  batch->changes = std::move(changes_);
  batch->records = std::move(records_);
  changes_.clear();
  records_.clear();
  change_index_.clear();
  ++edit_;  // from here on, every node the snapshot holds is shared: copy before writing
  store_.publish(batch->snapshot);
  return batch;
}

}  // namespace oddsrelay
