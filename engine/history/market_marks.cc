// A market's records, for the book at a moment (engine/history/market_marks.h).
#include "engine/history/market_marks.h"

#include <algorithm>

#include "engine/history/varint.h"

namespace oddsrelay::history {

namespace {

bool same_layout(const MarketLayout& l, const feed::MarketRec& rec) {
  if (l.size() != rec.lines.size()) return false;
  for (size_t i = 0; i < l.size(); ++i) {
    const feed::LineIn& in = rec.lines[i];
    if (l[i].outcomes.size() != in.count || l[i].key.view() != in.key) return false;
    for (uint32_t j = 0; j < in.count; ++j)
      if (l[i].outcomes[j] != rec.outcomes[in.first + j].id) return false;
  }
  return true;
}

uint64_t layout_hash(const feed::MarketRec& rec) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](uint64_t v) { h = (h ^ v) * 0x100000001b3ull; };
  for (const feed::LineIn& in : rec.lines) {
    for (char c : in.key) mix(static_cast<uint8_t>(c));
    mix(0x100u + in.count);
    for (uint32_t j = 0; j < in.count; ++j) mix(rec.outcomes[in.first + j].id);
  }
  return h;
}

}  // namespace

int32_t MarketMarks::intern(const feed::MarketRec& rec) {
  // The one before, nearly always; else any earlier one.
  if (tail_.layout >= 0 && same_layout(layouts_[static_cast<size_t>(tail_.layout)], rec)) return tail_.layout;
  const uint64_t h = layout_hash(rec);
  for (size_t i = 0; i < hashes_.size(); ++i)
    if (hashes_[i] == h && same_layout(layouts_[i], rec)) return static_cast<int32_t>(i);
  MarketLayout l;
  l.reserve(rec.lines.size());
  size_t cost = sizeof(MarketLayout) + sizeof(uint64_t) + rec.lines.size() * sizeof(LineLayout);
  for (const feed::LineIn& in : rec.lines) {
    LineLayout line{LineKey(in.key), {}};
    line.outcomes.reserve(in.count);
    for (uint32_t i = in.first; i < in.first + in.count; ++i) line.outcomes.push_back(rec.outcomes[i].id);
    cost += line.outcomes.capacity() * sizeof(uint32_t);
    l.push_back(std::move(line));
  }
  layouts_.push_back(std::move(l));
  hashes_.push_back(h);
  layout_bytes_ += cost;
  return static_cast<int32_t>(layouts_.size() - 1);
}

int64_t MarketMarks::add(uint64_t seq, int64_t at, const feed::MarketRec* rec) {
  const size_t before = bytes();
  const int32_t layout = rec && !rec->lines.empty() ? intern(*rec) : -1;
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

size_t MarketMarks::bytes() const { return sizeof(MarketMarks) + bytes_.capacity() + layout_bytes_; }

}  // namespace oddsrelay::history
