// One market's records and points as a byte log (engine/history/market_log.h).
#include "engine/history/market_log.h"

#include <algorithm>

#include "engine/history/varint.h"

namespace oddsrelay::history {

namespace {

constexpr uint64_t kNull = 1, kQuote = 2;

}  // namespace

// Whether `p` is a change the engine stamps an outcome's `ts` with (a new
// price or flags, or a return to the book: engine/core/market.h,
// build_market) is read before the state moves.
void OutcomeState::advance(const Point& p) {
  if (p.priced && (!priced || price != p.price || flags != p.flags)) change_ts = p.ts;
  ts = p.ts;
  seq = p.seq;
  priced = p.priced;
  if (p.priced) {
    price = p.price;
    flags = p.flags;
    s = p.s;
    priced_ts = p.ts;
    priced_seq = p.seq;
  }
}

int32_t MarketLog::intern(const feed::MarketRec& rec) {
  // The table's id (its hash of the record, checked), then its place among
  // the market's own: a scan of a few ids. (Walking the market's layouts'
  // bytes against the record first, as this did, cost more than the
  // table's look-up once that stopped making the record's bytes.)
  const uint32_t id = table_->intern(rec);
  auto it = std::find(layouts_.begin(), layouts_.end(), id);
  if (it != layouts_.end()) return static_cast<int32_t>(it - layouts_.begin());
  layouts_.push_back(id);
  return static_cast<int32_t>(layouts_.size() - 1);
}

MarketLayout MarketLog::layout(int32_t i) const { return table_->layout(layouts_[static_cast<size_t>(i)]); }

void MarketLog::begin(uint64_t seq, int64_t at, int32_t layout) {
  if (bytes_.room() < ByteLog::kSmall + 1) grow();
  // Within kSmall: at most 10 bytes each for the seq and time
  // differences, 5 for the layout's number.
  uint8_t* p = put_varint(bytes_.tail(), seq - tail_.seq);
  p = put_varint(p, zigzag(at - tail_.at));
  header_at_ = static_cast<size_t>(p - bytes_.data());
  p = put_varint(p, static_cast<uint64_t>(layout + 1) << 1);
  bytes_.grew_to(p);
  tail_ = Mark{seq, at, layout};
  open_points_ = false;
}

int32_t MarketLog::seed(uint64_t seq, int64_t at, const feed::MarketRec& rec) {
  const int32_t layout = rec.lines.empty() ? -1 : intern(rec);
  base_ = tail_ = Mark{seq, at, layout};
  return layout;
}

void MarketLog::seed_outcome(uint32_t number, const OutcomeState& st) {
  auto it = std::lower_bound(base_states_.begin(), base_states_.end(), number,
                             [](const auto& e, uint32_t n) { return e.first < n; });
  if (it != base_states_.end() && it->first == number)
    it->second = st;
  else
    base_states_.insert(it, {number, st});
}

std::vector<Point> MarketLog::points_of(uint32_t number) const {
  std::vector<Point> out;
  std::vector<OutcomeState> states;
  Mark mark;
  decode(
      UINT64_MAX, states, mark, [](const Mark&) {},
      [&](uint32_t n, const Point& p) {
        if (n == number) out.push_back(p);
      });
  return out;
}

std::optional<MarketLog::Mark> MarketLog::at_or_before(uint64_t seq, std::vector<OutcomeState>* states) const {
  std::vector<OutcomeState> own;
  Mark mark;
  decode(
      seq, states ? *states : own, mark, [](const Mark&) {}, [](uint32_t, const Point&) {});
  if (mark.seq == 0) return std::nullopt;
  return mark;
}

OutcomeState MarketLog::state_of(uint32_t number) const {
  std::vector<OutcomeState> states;
  Mark mark;
  decode(
      UINT64_MAX, states, mark, [](const Mark&) {}, [](uint32_t, const Point&) {});
  return states[number];
}

int64_t MarketLog::cut_before(uint64_t seq, std::vector<uint32_t>& remaining, uint64_t& dropped) {
  const size_t before = bytes();
  // Decoded to the last entry before `seq`: that state becomes the base.
  std::vector<OutcomeState> states;
  Mark mark;
  size_t gone = 0;
  decode(
      seq - 1, states, mark, [](const Mark&) {}, [&](uint32_t, const Point&) { ++gone; });
  remaining.assign(outcomes_, 0);
  // Where the kept entries start: re-walk the headers to the same entry.
  const uint8_t* p = bytes_.data();
  const uint8_t* end = p + bytes_.size();
  const uint8_t* keep = p;
  {
    Mark m = base_;
    while (p < end) {
      const uint64_t s = m.seq + get_varint(p);
      if (s > seq - 1) break;
      m.seq = s;
      get_varint(p);
      const uint64_t h = get_varint(p);
      if (h & 1)
        for (uint64_t c; (c = get_varint(p)) != 0;) {
          if (!(c & kNull)) get_varint(p);
          if (c & kQuote) get_varint(p);
        }
      keep = p;
    }
  }
  if (keep != bytes_.data()) {
    was_cut_ = true;
    base_ = mark;
    base_states_.clear();
    for (size_t n = 0; n < states.size(); ++n)
      if (states[n].seq != 0 || states[n].priced_seq != 0 || states[n].priced)
        base_states_.emplace_back(static_cast<uint32_t>(n), states[n]);
    base_states_.shrink_to_fit();
    ByteLog rest(keep, end);  // exact capacity: the freed bytes are given back
    bytes_.swap(rest);
    dropped += gone;
  }
  // What is left of each outcome.
  std::vector<OutcomeState> after;
  Mark m;
  decode(
      UINT64_MAX, after, m, [](const Mark&) {}, [&](uint32_t n, const Point&) { ++remaining[n]; });
  return static_cast<int64_t>(before) - static_cast<int64_t>(bytes());
}

int64_t MarketLog::forget(const std::vector<uint32_t>& gone) {
  const size_t before = bytes();
  std::erase_if(base_states_, [&](const auto& e) { return std::binary_search(gone.begin(), gone.end(), e.first); });
  base_states_.shrink_to_fit();
  return static_cast<int64_t>(before) - static_cast<int64_t>(bytes());
}

bool MarketLog::has_entries_before(uint64_t seq) const {
  if (bytes_.empty()) return false;
  const uint8_t* p = bytes_.data();
  return base_.seq + get_varint(p) < seq;
}

size_t MarketLog::bytes() const {
  return sizeof(MarketLog) + bytes_.capacity() + layouts_.capacity() * sizeof(uint32_t) +
         base_states_.capacity() * sizeof(base_states_[0]);
}

void MarketLog::add_bytes(HistoryBytes& b) const {
  b.layouts += layouts_.size();
  b.market_heads += sizeof(MarketLog);
  b.log += bytes_.capacity();
  b.log_slack += bytes_.capacity() - bytes_.size();
  b.layouts_bytes += layouts_.capacity() * sizeof(uint32_t);
  b.bases += base_states_.capacity() * sizeof(base_states_[0]);
}

}  // namespace oddsrelay::history
