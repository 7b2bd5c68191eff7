// A market's records, for the book at a moment (engine/history/market_marks.h).
#include "engine/history/market_marks.h"

#include <algorithm>

#include "engine/history/varint.h"

namespace oddsrelay::history {

int64_t MarketMarks::add(uint64_t seq, int64_t at, const feed::MarketRec* rec) {
  const size_t before = bytes();
  int32_t layout = -1;
  if (rec && !rec->lines.empty()) {
    MarketLayout l;
    l.reserve(rec->lines.size());
    for (const feed::LineIn& in : rec->lines) {
      LineLayout line{LineKey(in.key), {}};
      line.outcomes.reserve(in.count);
      for (uint32_t i = in.first; i < in.first + in.count; ++i) line.outcomes.push_back(rec->outcomes[i].id);
      l.push_back(std::move(line));
    }
    // The one before, nearly always; else any earlier one.
    if (tail_.layout >= 0 && layouts_[static_cast<size_t>(tail_.layout)] == l) {
      layout = tail_.layout;
    } else {
      auto it = std::find(layouts_.begin(), layouts_.end(), l);
      layout = static_cast<int32_t>(it - layouts_.begin());
      if (it == layouts_.end()) layouts_.push_back(std::move(l));
    }
  }
  if (bytes_.capacity() - bytes_.size() < 24) bytes_.reserve(bytes_.size() + bytes_.size() / 4 + 24);
  put_varint(bytes_, seq - tail_.seq);
  put_varint(bytes_, zigzag(at - tail_.at));
  put_varint(bytes_, static_cast<uint64_t>(layout + 1));
  tail_ = Mark{seq, at, layout};
  return static_cast<int64_t>(bytes()) - static_cast<int64_t>(before);
}

MarketMarks::Mark MarketMarks::decode(const uint8_t*& p, Mark& st) {
  st.seq += get_varint(p);
  st.at += unzigzag(get_varint(p));
  st.layout = static_cast<int32_t>(get_varint(p)) - 1;
  return st;
}

std::optional<MarketMarks::Mark> MarketMarks::at_or_before(uint64_t seq) const {
  Mark st = base_;
  std::optional<Mark> found;
  const uint8_t* p = bytes_.data();
  const uint8_t* end = p + bytes_.size();
  if (base_.seq != 0 && base_.seq <= seq) found = base_;  // the mark kept by a cut
  while (p < end) {
    Mark m = decode(p, st);
    if (m.seq > seq) break;
    found = m;
  }
  return found;
}

int64_t MarketMarks::cut_before(uint64_t seq) {
  const size_t before = bytes();
  Mark st = base_;
  const uint8_t* p = bytes_.data();
  const uint8_t* end = p + bytes_.size();
  const uint8_t* keep = p;
  Mark keep_base = base_;
  while (p < end) {
    Mark prev = st;
    const uint8_t* at = p;
    if (decode(p, st).seq >= seq) {
      p = at;
      st = prev;
      break;
    }
    // This mark is before the cut: it becomes the base, the ones before it go.
    keep = p;
    keep_base = st;
  }
  if (keep == bytes_.data()) return 0;
  base_ = keep_base;
  std::vector<uint8_t> rest(keep, end);
  bytes_.swap(rest);
  return static_cast<int64_t>(before) - static_cast<int64_t>(bytes());
}

size_t MarketMarks::bytes() const {
  size_t n = sizeof(MarketMarks) + bytes_.capacity();
  for (const MarketLayout& l : layouts_) {
    n += sizeof(MarketLayout) + l.capacity() * sizeof(LineLayout);
    for (const LineLayout& line : l) n += line.outcomes.capacity() * sizeof(uint32_t);
  }
  return n;
}

}  // namespace oddsrelay::history
