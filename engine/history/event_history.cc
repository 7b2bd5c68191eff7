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

void EventHistory::add_point(MarketLog& log, uint32_t number, QuoteTail& tail, const Point& p) {
  log.put(number, tail, p.priced, p.price, p.flags, p.s);
  ++points_;
}

size_t EventHistory::market_index(uint32_t market) {
  auto it = std::lower_bound(logs_.begin(), logs_.end(), market,
                             [](const MarketLog& m, uint32_t id) { return m.market() < id; });
  const size_t i = static_cast<size_t>(it - logs_.begin());
  if (it == logs_.end() || it->market() != market) {
    // The two arrays as allocated, room included: a log's bytes() moves
    // with its heap bytes only, so its fixed part is counted here once.
    const size_t before = heads_bytes();
    logs_.insert(it, MarketLog(market, layouts_));
    slots_.insert(slots_.begin() + static_cast<ptrdiff_t>(i), MarketSlots{});
    bytes_ += heads_bytes() - before;
  }
  return i;
}

const MarketLog* EventHistory::log_of(uint32_t market) const {
  auto it = std::lower_bound(logs_.begin(), logs_.end(), market,
                             [](const MarketLog& m, uint32_t id) { return m.market() < id; });
  return it != logs_.end() && it->market() == market ? &*it : nullptr;
}

const OutcomeHistory* EventHistory::find(const OutcomeKey& k) const {
  auto it = std::lower_bound(outcomes_.begin(), outcomes_.end(), k,
                             [](const auto& o, const OutcomeKey& key) { return o->key < key; });
  return it != outcomes_.end() && !(k < (*it)->key) ? it->get() : nullptr;
}

std::vector<Point> EventHistory::points_of(const OutcomeHistory& o, OutcomeState* last) const {
  std::vector<Point> out;
  const MarketLog* log = log_of(o.key.market);
  if (!log) return out;
  std::vector<OutcomeState> states;
  MarketLog::Mark mark;
  log->decode(
      UINT64_MAX, states, mark, [](const MarketLog::Mark&) {},
      [&](uint32_t n, const Point& p) {
        if (n == o.number) out.push_back(p);
      });
  if (last) *last = states[o.number];
  return out;
}

void EventHistory::points_by_number(uint32_t market, std::vector<std::vector<Point>>& points,
                                    std::vector<OutcomeState>& last) const {
  points.clear();
  last.clear();
  const MarketLog* log = log_of(market);
  if (!log) return;
  points.resize(log->outcomes());
  MarketLog::Mark mark;
  log->decode(
      UINT64_MAX, last, mark, [](const MarketLog::Mark&) {},
      [&](uint32_t n, const Point& p) { points[n].push_back(p); });
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
  return std::all_of(logs_.begin(), logs_.end(), [](const MarketLog& m) { return m.removed(); });
}

int64_t EventHistory::on_market(const feed::MarketRec& rec, int64_t at, uint64_t seq) {
  const size_t bytes_before = bytes_;
  seen(seq);
  const size_t mi = market_index(rec.market);
  MarketLog& log = logs_[mi];
  const size_t log_before = log.bytes();
  const int32_t layout = log.begin(seq, at, &rec);
  MarketSlots& ms = slots_[mi];
  if (layout != ms.layout) {
    relayout(ms, rec, layout, at, seq);
  } else {
    // The same lines and outcomes in the same order: slot k is the record's
    // k-th outcome.
    Slot* slot = ms.slots.data();
    for (const feed::LineIn& l : rec.lines)
      for (uint32_t i = l.first; i < l.first + l.count; ++i, ++slot) {
        const feed::OutcomeIn& oi = rec.outcomes[i];
        const QuoteTail& t = slot->tail;
        if (t.price == oi.price && t.flags == oi.flags && t.s == l.suspended) continue;
        add_point(log, slot->number, slot->tail, Point{at, seq, oi.price, oi.flags, l.suspended, true});
      }
  }
  log.end();
  bytes_ += log.bytes() - log_before;
  return static_cast<int64_t>(bytes_) - static_cast<int64_t>(bytes_before);
}

const uint32_t* EventHistory::numbers_of(MarketSlots& ms, MarketLog& log, const feed::MarketRec& rec, int32_t layout) {
  if (ms.layout_at.size() <= static_cast<size_t>(layout)) ms.layout_at.resize(static_cast<size_t>(layout) + 1, -1);
  if (ms.layout_at[static_cast<size_t>(layout)] >= 0)
    return ms.numbers.data() + ms.layout_at[static_cast<size_t>(layout)];
  const size_t at = ms.numbers.size();
  // Numbers are given in the order a market's records list their outcomes,
  // and a new layout is mostly lines the market had (a ladder moved by a
  // rung), so the search starts after the number found last and nearly
  // always stops there: a new layout costs its outcomes, not outcomes x
  // the market's names.
  // A line none of the market's names had (the search for its first
  // outcome says so) has only outcomes named here since: the others search
  // those alone.
  size_t hint = 0;
  for (const feed::LineIn& l : rec.lines) {
    const LineKey line(l.key);
    const size_t line_from = ms.names.size();
    bool line_known = true;
    for (uint32_t i = l.first; i < l.first + l.count; ++i) {
      const uint32_t id = rec.outcomes[i].id;
      const size_t names = ms.names.size();
      const size_t from = line_known ? 0 : line_from;
      size_t n = names;
      bool seen_line = false;
      for (size_t k = from; k < names; ++k) {
        const size_t j = !line_known ? k : hint + k < names ? hint + k : hint + k - names;
        const MarketSlots::Name& name = ms.names[j];
        if (!(name.line == line)) continue;
        seen_line = true;
        if (name.id == id && ms.by_number[j]) {
          n = j;
          break;
        }
      }
      if (i == l.first && !seen_line) line_known = false;
      hint = n + 1;
      if (n == names) {
        auto o = std::make_unique<OutcomeHistory>();
        o->key = OutcomeKey{rec.market, line, id};
        o->number = log.add_outcome();
        ms.by_number.push_back(o.get());
        ms.names.push_back({line, id});
        ms.slot_of.push_back(-1);
        auto pos = std::lower_bound(outcomes_.begin(), outcomes_.end(), o->key,
                                    [](const auto& a, const OutcomeKey& k) { return a->key < k; });
        outcomes_.insert(pos, std::move(o));
        bytes_ += kOutcomeBytes;
      }
      ms.numbers.push_back(static_cast<uint32_t>(n));
    }
  }
  ms.layout_at[static_cast<size_t>(layout)] = static_cast<int32_t>(at);
  bytes_ += (ms.numbers.size() - at) * sizeof(uint32_t) + sizeof(int32_t);
  return ms.numbers.data() + at;
}

void EventHistory::relayout(MarketSlots& ms, const feed::MarketRec& rec, int32_t layout, int64_t at, uint64_t seq) {
  MarketLog& log = logs_[static_cast<size_t>(&ms - slots_.data())];
  const uint32_t* numbers = layout >= 0 ? numbers_of(ms, log, rec, layout) : nullptr;
  // Reused: a relayout is a common record, and its slots a short array.
  thread_local std::vector<Slot> next;
  next.clear();
  size_t k = 0;
  for (const feed::LineIn& l : rec.lines)
    for (uint32_t i = l.first; i < l.first + l.count; ++i, ++k) {
      const feed::OutcomeIn& oi = rec.outcomes[i];
      const uint32_t n = numbers[k];
      Slot slot;
      if (const int32_t j = ms.slot_of[n]; j >= 0) {
        slot = ms.slots[static_cast<size_t>(j)];
        ms.slot_of[n] = -2;  // kept
      } else {
        OutcomeHistory* o = ms.by_number[n];
        slot = Slot{o, n, o->tail};
        o->in_book = true;
      }
      const QuoteTail& t = slot.tail;
      // (An outcome the memory bound cut to no points still knows its last quote.)
      if (!t.priced || t.price != oi.price || t.flags != oi.flags || t.s != l.suspended)
        add_point(log, n, slot.tail, Point{at, seq, oi.price, oi.flags, l.suspended, true});
      next.push_back(slot);
    }
  // Outcomes of the market the record no longer has: withdrawn.
  for (Slot& s : ms.slots) {
    if (ms.slot_of[s.number] == -2) continue;
    add_point(log, s.number, s.tail, Point{at, seq, 0, 0, 0, false});
    s.o->tail = s.tail;
    s.o->in_book = false;
    ms.slot_of[s.number] = -1;
  }
  for (size_t j = 0; j < next.size(); ++j) ms.slot_of[next[j].number] = static_cast<int32_t>(j);
  ms.slots.assign(next.begin(), next.end());
  ms.layout = layout;
}

namespace {
// The record that would have made `m`: build_market's inverse.
feed::MarketRec record_of(const Market& m) {
  feed::MarketRec rec;
  rec.market = m.id;
  for (const Line& l : m.lines) rec.lines.push_back({std::string(l.key.view()), l.suspended, l.first, l.count});
  for (const Outcome& o : m.outcomes) rec.outcomes.push_back({o.id, o.price, o.flags});
  return rec;
}
}  // namespace

int64_t EventHistory::seed_market(const Market& m, uint64_t seq) {
  const size_t bytes_before = bytes_;
  const feed::MarketRec rec = record_of(m);
  seen(seq);
  const size_t mi = market_index(m.id);
  MarketLog& log = logs_[mi];
  const size_t log_before = log.bytes();
  // Every line of a market carries the `at` of its last record (build_market).
  const int32_t layout = log.seed(seq, m.lines.empty() ? 0 : m.lines.front().ls, rec);
  MarketSlots& ms = slots_[mi];
  if (layout >= 0) {
    const uint32_t* numbers = numbers_of(ms, log, rec, layout);
    size_t k = 0;
    for (const Line& l : m.lines)
      for (uint32_t i = l.first; i < l.first + l.count; ++i, ++k) {
        const Outcome& q = m.outcomes[i];
        OutcomeHistory* o = ms.by_number[numbers[k]];
        o->tail = QuoteTail{q.price, q.flags, l.suspended, true};
        o->in_book = true;
        // Priced, but no priced point held (priced_seq 0): the engine's `ts`
        // keeps the book at a moment exact.
        OutcomeState st;
        st.price = q.price;
        st.flags = q.flags;
        st.s = l.suspended;
        st.priced = true;
        st.change_ts = q.ts;
        log.seed_outcome(numbers[k], st);
        ms.slot_of[numbers[k]] = static_cast<int32_t>(ms.slots.size());
        ms.slots.push_back(Slot{o, numbers[k], o->tail});
      }
  }
  ms.layout = layout;
  bytes_ += log.bytes() - log_before;
  return static_cast<int64_t>(bytes_) - static_cast<int64_t>(bytes_before);
}

void EventHistory::seed_listing(bool listed, bool live, uint64_t seq) {
  seen(seq);
  if (listed) listing_.emplace_back(seq, true);
  if (live) live_seq_ = seq;
}

int64_t EventHistory::on_remove(int64_t at, uint64_t seq) {
  const size_t bytes_before = bytes_;
  for (size_t i = 0; i < logs_.size(); ++i) {
    MarketLog& log = logs_[i];
    if (log.removed()) continue;
    const size_t b = log.bytes();
    log.begin(seq, at, nullptr);
    for (Slot& s : slots_[i].slots) {
      add_point(log, s.number, s.tail, Point{at, seq, 0, 0, 0, false});
      s.o->tail = s.tail;
      s.o->in_book = false;
      slots_[i].slot_of[s.number] = -1;
    }
    log.end();
    slots_[i].slots.clear();
    slots_[i].layout = -1;
    bytes_ += log.bytes() - b;
  }
  if (listing_.empty() || listing_.back().second) listing_.emplace_back(seq, false);
  return static_cast<int64_t>(bytes_) - static_cast<int64_t>(bytes_before);
}

void EventHistory::on_event(std::string_view key, bool live, uint64_t seq) {
  if (key != key_) key_ = key;
  seen(seq);
  if (listing_.empty() || !listing_.back().second) listing_.emplace_back(seq, true);
  if (!live || live_seq_ != 0) return;
  live_seq_ = seq;
  // Each outcome's close is its last priced point before now, which its
  // points say (close_of), unless the memory bound cut its market's log
  // before: then the base of the log may hold it, so it is kept apart.
  for (size_t i = 0; i < logs_.size(); ++i) {
    if (!logs_[i].was_cut()) continue;
    std::vector<OutcomeState> states;
    MarketLog::Mark mark;
    logs_[i].decode(
        UINT64_MAX, states, mark, [](const MarketLog::Mark&) {}, [](uint32_t, const Point&) {});
    Pins& pins = slots_[i].pins;
    const size_t before = pins.bytes();
    for (size_t n = 0; n < states.size(); ++n)
      if (const Point close = states[n].last_priced(); close.priced) pins.set_close(static_cast<uint32_t>(n), close);
    bytes_ += pins.bytes() - before;
  }
}

const EventHistory::MarketSlots* EventHistory::slots_of(uint32_t market) const {
  const MarketLog* log = log_of(market);
  return log ? &slots_[static_cast<size_t>(log - logs_.data())] : nullptr;
}

Point EventHistory::open_of(const OutcomeHistory& o, const std::vector<Point>& points) const {
  const MarketSlots* ms = slots_of(o.key.market);
  Point pinned;
  if (ms && ms->pins.get(o.number, &pinned, nullptr)) return pinned;
  for (const Point& p : points)
    if (p.priced) return p;
  return Point{};
}

Point EventHistory::close_of(const OutcomeHistory& o, const std::vector<Point>& points) const {
  if (live_seq_ == 0) return Point{};
  const MarketSlots* ms = slots_of(o.key.market);
  Point pinned;
  if (ms && ms->pins.get(o.number, nullptr, &pinned)) return pinned;
  // The last priced point before the event went live. (A seeded base is no
  // point: its priced seq is 0, so the state then said the same; a cut one
  // that held a close had it pinned.)
  Point close;
  for (const Point& p : points) {
    if (p.seq > live_seq_) break;
    if (p.priced) close = p;
  }
  return close;
}

int64_t EventHistory::pin(size_t i, uint64_t seq) {
  std::vector<std::vector<Point>> points;
  std::vector<OutcomeState> last;
  points_by_number(logs_[i].market(), points, last);
  Pins& pins = slots_[i].pins;
  const size_t before = pins.bytes();
  for (size_t n = 0; n < points.size(); ++n) {
    const OutcomeHistory* o = slots_[i].by_number[n];
    if (!o) continue;
    const auto number = static_cast<uint32_t>(n);
    if (const Point open = open_of(*o, points[n]); open.priced && open.seq < seq) pins.set_open(number, open);
    if (const Point close = close_of(*o, points[n]); close.priced && close.seq < seq) pins.set_close(number, close);
  }
  return static_cast<int64_t>(pins.bytes()) - static_cast<int64_t>(before);
}

int64_t EventHistory::cut_before(uint64_t seq) {
  int64_t freed = 0;
  std::vector<uint32_t> remaining;
  bool any_gone = false;
  for (size_t i = 0; i < logs_.size(); ++i) {
    uint64_t dropped = 0;
    if (logs_[i].has_entries_before(seq)) freed -= pin(i, seq);
    freed += logs_[i].cut_before(seq, remaining, dropped);
    points_ -= dropped;
    // An outcome out of the book whose points are all cut goes whole (its
    // open and close with it): what it costs besides its points is most of
    // what a short history holds. One still in the book stays, so that its
    // next change or withdrawal is a point as it would have been.
    for (size_t n = 0; n < remaining.size(); ++n) {
      OutcomeHistory*& o = slots_[i].by_number[n];
      if (!o || remaining[n] != 0 || o->in_book) continue;
      o->number = UINT32_MAX;  // marked for the erase below
      o = nullptr;
      any_gone = true;
      // The market's layouts may name it: they are resolved again.
      std::fill(slots_[i].layout_at.begin(), slots_[i].layout_at.end(), -1);
      freed += static_cast<int64_t>(slots_[i].numbers.size() * sizeof(uint32_t));
      slots_[i].numbers.clear();
    }
  }
  if (any_gone) {
    const size_t n = outcomes_.size();
    std::erase_if(outcomes_, [](const auto& o) { return o->number == UINT32_MAX; });
    freed += static_cast<int64_t>((n - outcomes_.size()) * kOutcomeBytes);
  }
  bytes_ -= static_cast<size_t>(freed);
  return freed;
}

int64_t EventHistory::oldest_ts() const {
  int64_t oldest = INT64_MAX;
  for (const MarketLog& log : logs_) {
    std::vector<OutcomeState> states;
    MarketLog::Mark mark;
    log.decode(
        UINT64_MAX, states, mark, [](const MarketLog::Mark&) {},
        [&](uint32_t, const Point& p) { oldest = std::min(oldest, p.ts); });
  }
  return oldest;
}

void EventHistory::add_bytes(HistoryBytes& b) const {
  b.markets += logs_.size();
  b.outcomes += outcomes_.size();
  b.events += sizeof(EventHistory) + key_.capacity() + listing_.capacity() * sizeof(listing_[0]);
  b.market_heads += (logs_.capacity() - logs_.size()) * sizeof(MarketLog) + slots_.capacity() * sizeof(MarketSlots);
  for (const MarketLog& log : logs_) log.add_bytes(b);
  b.outcome_keys += outcomes_.capacity() * sizeof(void*) + outcomes_.size() * sizeof(OutcomeHistory);
  for (const MarketSlots& ms : slots_)
    b.writer += ms.slots.capacity() * sizeof(Slot) + ms.by_number.capacity() * sizeof(void*) +
                ms.names.capacity() * sizeof(MarketSlots::Name) + ms.slot_of.capacity() * sizeof(int32_t) +
                ms.layout_at.capacity() * sizeof(int32_t) + ms.numbers.capacity() * sizeof(uint32_t) + ms.pins.bytes();
}

}  // namespace oddsrelay::history
