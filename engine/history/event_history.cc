// Point making for one event (engine/history/event_history.h).
#include "engine/history/event_history.h"

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <tuple>

namespace oddsrelay::history {

bool operator<(const OutcomeKey& a, const OutcomeKey& b) {
  return std::forward_as_tuple(a.market, a.line.view(), a.outcome) <
         std::forward_as_tuple(b.market, b.line.view(), b.outcome);
}

size_t EventHistory::market_index(uint32_t market) {
  auto it = std::lower_bound(logs_.begin(), logs_.end(), market,
                             [](const MarketLog& m, uint32_t id) { return m.market() < id; });
  const size_t i = static_cast<size_t>(it - logs_.begin());
  if (it == logs_.end() || it->market() != market) {
    // The two arrays as allocated, room included: a log's bytes() moves
    // with its heap bytes only, so its fixed part is counted here once.
    const size_t before = heads_bytes();
    // Room for one more at a time: an event's markets come early and
    // few (some 5 each), and a doubled array of 300-byte heads would
    // be a fifth of what a market costs besides its points.
    if (logs_.size() == logs_.capacity()) {
      logs_.reserve(logs_.size() + 1);
      it = logs_.begin() + static_cast<ptrdiff_t>(i);
      slots_.reserve(slots_.size() + 1);
    }
    logs_.insert(it, MarketLog(market, layouts_));
    slots_.insert(slots_.begin() + static_cast<ptrdiff_t>(i), MarketSlots{});
    bytes_ += heads_bytes() - before;
  }
  return i;
}

namespace {

// Every cache line of [p, p + bytes), up to `most` of them.
void fetch_lines(const void* p, size_t bytes, size_t most) {
  const auto* c = static_cast<const char*>(p);
  for (size_t off = 0; off < bytes && off < most * 64; off += 64) __builtin_prefetch(c + off);
}

}  // namespace

void EventHistory::fetch_heads() const {
  // market_index's search reads each head's market id: one line a head
  // (they are some 150 bytes apart), a few an event.
  for (const MarketLog& l : logs_) __builtin_prefetch(&l);
}

void EventHistory::fetch_market(uint32_t market) const {
  auto it = std::lower_bound(logs_.begin(), logs_.end(), market,
                             [](const MarketLog& m, uint32_t id) { return m.market() < id; });
  if (it == logs_.end() || it->market() != market) return;
  const MarketSlots& ms = slots_[static_cast<size_t>(it - logs_.begin())];
  fetch_lines(&ms, sizeof ms, 3);
  __builtin_prefetch(it->tail_bytes(), 1);
}

void EventHistory::fetch_outcomes(uint32_t market) const {
  const MarketSlots* ms = slots_of(market);
  if (!ms) return;
  fetch_lines(ms->cur.data(), ms->cur.size() * sizeof(uint32_t), 4);
  fetch_lines(ms->outs.data(), ms->outs.size() * sizeof(Out), 8);
}

const MarketLog* EventHistory::log_of(uint32_t market) const {
  auto it = std::lower_bound(logs_.begin(), logs_.end(), market,
                             [](const MarketLog& m, uint32_t id) { return m.market() < id; });
  return it != logs_.end() && it->market() == market ? &*it : nullptr;
}

const OutcomeHistory* OutcomeList::find(const OutcomeKey& k) const {
  auto it = std::lower_bound(v_.begin(), v_.end(), k,
                             [](const OutcomeHistory& o, const OutcomeKey& key) { return o.key < key; });
  return it != v_.end() && !(k < it->key) ? &*it : nullptr;
}

OutcomeList EventHistory::outcomes() const {
  OutcomeList::Vec out;
  out.reserve(outcomes_);
  for (size_t i = 0; i < logs_.size(); ++i) {
    const MarketSlots& ms = slots_[i];
    const size_t from = out.size();
    for (size_t n = 0; n < ms.outs.size(); ++n) {
      const Out& o = ms.outs[n];
      if (!o.gone) out.push_back({OutcomeKey{logs_[i].market(), line(o.line), o.id}, static_cast<uint32_t>(n)});
    }
    // The markets are in order already; within one, by line and outcome.
    std::sort(out.begin() + static_cast<ptrdiff_t>(from), out.end(),
              [](const OutcomeHistory& a, const OutcomeHistory& b) { return a.key < b.key; });
  }
  return OutcomeList(std::move(out));
}

std::optional<OutcomeHistory> EventHistory::find(const OutcomeKey& k) const {
  const MarketSlots* ms = slots_of(k.market);
  if (!ms) return std::nullopt;
  for (size_t n = 0; n < ms->outs.size(); ++n) {
    const Out& o = ms->outs[n];
    if (o.id == k.outcome && !o.gone && line(o.line) == k.line) return OutcomeHistory{k, static_cast<uint32_t>(n)};
  }
  return std::nullopt;
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
  if (outcomes_ != 0 || (!listing_.empty() && listing_.back().second)) return false;
  return std::all_of(logs_.begin(), logs_.end(), [](const MarketLog& m) { return m.removed(); });
}

int64_t EventHistory::on_market(const feed::MarketRec& rec, int64_t at, uint64_t seq) {
  const size_t bytes_before = bytes_;
  seen(seq);
  const size_t mi = market_index(rec.market);
  MarketLog& log = logs_[mi];
  MarketSlots& ms = slots_[mi];
  const size_t log_before = log.bytes();
  // Nearly every record repeats its market's layout: checked against `cur`
  // alone, so the layout table (its bytes, its hash) is read only for a
  // record that changes it.
  if (ms.layout >= 0 && repeats(ms, rec)) {
    log.begin(seq, at, ms.layout);
    zip(ms, log, rec);
  } else {
    const int32_t layout = log.layout_of(&rec);
    log.begin(seq, at, layout);
    if (layout != ms.layout) {
      const size_t writer_before = ms.bytes();
      relayout(ms, rec, layout);
      bytes_ += ms.bytes() - writer_before;
    } else {
      zip(ms, log, rec);  // the table's word over `cur`'s (they agree: keys cut as LineKey cuts them)
    }
  }
  log.end();
  bytes_ += log.bytes() - log_before;
  return static_cast<int64_t>(bytes_) - static_cast<int64_t>(bytes_before);
}

bool EventHistory::repeats(const MarketSlots& ms, const feed::MarketRec& rec) const {
  const uint32_t* c = ms.cur.data();
  const uint32_t* const end = c + ms.cur.size();
  for (const feed::LineIn& l : rec.lines) {
    if (c == end || c[1] != l.count || !(line(c[0]) == LineKey(l.key))) return false;
    c += 2;
    for (uint32_t i = l.first; i < l.first + l.count; ++i, ++c)
      if (ms.outs[*c].id != rec.outcomes[i].id) return false;
  }
  return c == end;
}

void EventHistory::zip(MarketSlots& ms, MarketLog& log, const feed::MarketRec& rec) {
  // The same lines and outcomes in the same order: the k-th number of
  // `cur` is the record's k-th outcome.
  const uint32_t* c = ms.cur.data();
  for (const feed::LineIn& l : rec.lines) {
    c += 2;
    for (uint32_t i = l.first; i < l.first + l.count; ++i, ++c) {
      const feed::OutcomeIn& oi = rec.outcomes[i];
      Out& o = ms.outs[*c];
      if (o.price == oi.price && o.flags == oi.flags && o.s == l.suspended) continue;
      put(log, o, *c, true, oi.price, oi.flags, l.suspended);
    }
  }
}

const uint32_t* EventHistory::line_in_cur(const MarketSlots& ms, uint32_t line, size_t& from) {
  const size_t size = ms.cur.size();
  for (size_t c = from; c < size; c += 2 + ms.cur[c + 1])
    if (ms.cur[c] == line) return from = c + 2 + ms.cur[c + 1], ms.cur.data() + c;
  for (size_t c = 0; c < from; c += 2 + ms.cur[c + 1])
    if (ms.cur[c] == line) return from = c + 2 + ms.cur[c + 1], ms.cur.data() + c;
  return nullptr;
}

const uint32_t* EventHistory::numbers_of(MarketSlots& ms, MarketLog& log, const feed::MarketRec& rec, int32_t layout,
                                         const uint32_t* lines) {
  if (ms.layout_at.size() <= static_cast<size_t>(layout)) ms.layout_at.resize(static_cast<size_t>(layout) + 1, -1);
  if (ms.layout_at[static_cast<size_t>(layout)] >= 0)
    return ms.numbers.data() + ms.layout_at[static_cast<size_t>(layout)];
  const size_t at = ms.numbers.size();
  // A line of the layout before (`cur`: a moved ladder keeps some of its
  // rungs, in order) gives its outcomes' numbers by place, where the ids
  // agree: an outcome in the book is the one number its line and id have
  // (numbers are made only when the search below finds none held).
  // Otherwise numbers are given in the order a market's records list their
  // outcomes, and a new layout is mostly lines the market had, so the
  // search starts after the number found last and nearly always stops
  // there: a new layout costs its outcomes, not outcomes x the market's
  // outcomes. A line none of the market's outcomes had (the search for its
  // first outcome says so) has only outcomes made here since: the others
  // search those alone.
  size_t hint = 0, cur_from = 0;
  for (const feed::LineIn& l : rec.lines) {
    const uint32_t li = *lines++;
    const uint32_t* in_cur = line_in_cur(ms, li, cur_from);
    const size_t line_from = ms.outs.size();
    bool line_known = true;
    if (!(ms.lines_seen & MarketSlots::line_bit(li))) line_known = false;  // no outcome of the market has it
    for (uint32_t i = l.first; i < l.first + l.count; ++i) {
      const uint32_t id = rec.outcomes[i].id;
      const size_t outs = ms.outs.size();
      const uint32_t place = i - l.first;
      size_t n = outs;
      if (in_cur && place < in_cur[1] && ms.outs[in_cur[2 + place]].id == id) {
        n = in_cur[2 + place];
      } else {
        const size_t from = line_known ? 0 : line_from;
        bool seen_line = false;
        for (size_t k = from; k < outs; ++k) {
          const size_t j = !line_known ? k : hint + k < outs ? hint + k : hint + k - outs;
          const Out& o = ms.outs[j];
          if (o.line != li) continue;
          seen_line = true;
          if (o.id == id && !o.gone) {
            n = j;
            break;
          }
        }
        if (i == l.first && !seen_line) line_known = false;
      }
      hint = n + 1;
      if (n == outs) {
        log.add_outcome();
        Out o;
        o.id = id;
        o.line = li;
        append(ms.outs, o);
        ms.lines_seen |= MarketSlots::line_bit(li);
        ++outcomes_;
      }
      append(ms.numbers, static_cast<uint32_t>(n));
    }
  }
  ms.layout_at[static_cast<size_t>(layout)] = static_cast<int32_t>(at);
  return ms.numbers.data() + at;
}

const uint32_t* EventHistory::lines_of(const MarketLog& log, int32_t layout) const {
  thread_local std::vector<uint32_t> lines;
  layouts_->line_ids(log.layout_id(layout), lines);
  return lines.data();
}

void EventHistory::relayout(MarketSlots& ms, const feed::MarketRec& rec, int32_t layout) {
  MarketLog& log = logs_[static_cast<size_t>(&ms - slots_.data())];
  // The layout's line ids from the store's table, which found it: no line
  // key is hashed here.
  const uint32_t* lines = layout >= 0 ? lines_of(log, layout) : nullptr;
  const uint32_t* numbers = layout >= 0 ? numbers_of(ms, log, rec, layout, lines) : nullptr;
  // The layout before, taken out of the book; the record's outcomes put
  // back. Points: the record's outcomes in its order, then the withdrawn
  // in the order the layout before listed them.
  thread_local std::vector<uint32_t> before;
  before.clear();
  for (size_t c = 0; c < ms.cur.size(); c += 2 + ms.cur[c + 1])
    for (uint32_t j = 0; j < ms.cur[c + 1]; ++j) {
      before.push_back(ms.cur[c + 2 + j]);
      ms.outs[ms.cur[c + 2 + j]].in_book = 0;
    }
  ms.cur.clear();
  size_t k = 0;
  for (const feed::LineIn& l : rec.lines) {
    append(ms.cur, *lines++);
    append(ms.cur, l.count);
    for (uint32_t i = l.first; i < l.first + l.count; ++i, ++k) {
      const feed::OutcomeIn& oi = rec.outcomes[i];
      const uint32_t n = numbers[k];
      Out& o = ms.outs[n];
      append(ms.cur, n);
      o.in_book = 1;
      // (An outcome the memory bound cut to no points still knows its last quote.)
      if (!o.priced || o.price != oi.price || o.flags != oi.flags || o.s != l.suspended)
        put(log, o, n, true, oi.price, oi.flags, l.suspended);
    }
  }
  for (uint32_t n : before)
    if (!ms.outs[n].in_book) put(log, ms.outs[n], n, false, 0, 0, 0);
  ms.layout = layout;
}

void EventHistory::withdraw_all(MarketSlots& ms, MarketLog& log) {
  for (size_t c = 0; c < ms.cur.size(); c += 2 + ms.cur[c + 1])
    for (uint32_t j = 0; j < ms.cur[c + 1]; ++j) {
      const uint32_t n = ms.cur[c + 2 + j];
      put(log, ms.outs[n], n, false, 0, 0, 0);
      ms.outs[n].in_book = 0;
    }
  ms.cur.clear();
  ms.layout = -1;
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
  const size_t writer_before = ms.bytes();
  if (layout >= 0) {
    const uint32_t* lines = lines_of(log, layout);
    const uint32_t* numbers = numbers_of(ms, log, rec, layout, lines);
    size_t k = 0;
    for (const Line& l : m.lines) {
      append(ms.cur, *lines++);
      append(ms.cur, l.count);
      for (uint32_t i = l.first; i < l.first + l.count; ++i, ++k) {
        const Outcome& q = m.outcomes[i];
        Out& o = ms.outs[numbers[k]];
        o.price = q.price;
        o.flags = q.flags;
        o.s = l.suspended;
        o.priced = 1;
        o.in_book = 1;
        // Priced, but no priced point held (priced_seq 0): the engine's `ts`
        // keeps the book at a moment exact.
        OutcomeState st;
        st.price = q.price;
        st.flags = q.flags;
        st.s = l.suspended;
        st.priced = true;
        st.change_ts = q.ts;
        log.seed_outcome(numbers[k], st);
        append(ms.cur, numbers[k]);
      }
    }
  }
  ms.layout = layout;
  bytes_ += ms.bytes() - writer_before;
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
    withdraw_all(slots_[i], log);
    log.end();
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
  const MarketSlots& ms = slots_[i];
  for (size_t n = 0; n < points.size(); ++n) {
    const Out& out = ms.outs[n];
    if (out.gone) continue;
    const auto number = static_cast<uint32_t>(n);
    const OutcomeHistory o{OutcomeKey{logs_[i].market(), line(out.line), out.id}, number};
    if (const Point open = open_of(o, points[n]); open.priced && open.seq < seq) pins.set_open(number, open);
    if (const Point close = close_of(o, points[n]); close.priced && close.seq < seq) pins.set_close(number, close);
  }
  return static_cast<int64_t>(pins.bytes()) - static_cast<int64_t>(before);
}

int64_t EventHistory::cut_before(uint64_t seq) {
  int64_t freed = 0;
  std::vector<uint32_t> remaining;
  for (size_t i = 0; i < logs_.size(); ++i) {
    uint64_t dropped = 0;
    if (logs_[i].has_entries_before(seq)) freed -= pin(i, seq);
    freed += logs_[i].cut_before(seq, remaining, dropped);
    points_ -= dropped;
    // An outcome out of the book whose points are all cut goes whole (its
    // open and close with it): what it costs besides its points is most of
    // what a short history holds. One still in the book stays, so that its
    // next change or withdrawal is a point as it would have been.
    // (Its number is not given again: the log's entries name it. Its 16
    // bytes in the market's array stay until the event goes.)
    MarketSlots& ms = slots_[i];
    thread_local std::vector<uint32_t> gone;
    gone.clear();
    for (size_t n = 0; n < remaining.size(); ++n) {
      Out& o = ms.outs[n];
      if (o.gone || remaining[n] != 0 || o.in_book) continue;
      o.gone = 1;
      --outcomes_;
      gone.push_back(static_cast<uint32_t>(n));
    }
    if (!gone.empty()) {
      freed += logs_[i].forget(gone);
      // The market's layouts may name one: they are resolved again.
      const size_t before = ms.bytes();
      std::fill(ms.layout_at.begin(), ms.layout_at.end(), -1);
      std::vector<uint32_t>().swap(ms.numbers);
      freed += static_cast<int64_t>(before - ms.bytes());
    }
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
  b.outcomes += outcomes_;
  b.events += sizeof(EventHistory) + key_.capacity() + listing_.capacity() * sizeof(listing_[0]);
  b.market_heads += (logs_.capacity() - logs_.size()) * sizeof(MarketLog) + slots_.capacity() * sizeof(MarketSlots);
  for (const MarketLog& log : logs_) log.add_bytes(b);
  for (const MarketSlots& ms : slots_) {
    b.outcome_keys += ms.outs.capacity() * sizeof(Out);
    b.writer += ms.bytes() - ms.outs.capacity() * sizeof(Out);
  }
}

}  // namespace oddsrelay::history
