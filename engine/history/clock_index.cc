// The feed time to log position index (engine/history/clock_index.h).
#include "engine/history/clock_index.h"

#include <algorithm>

#include "engine/history/varint.h"

namespace oddsrelay::history {

int64_t ClockIndex::add(int64_t at, uint64_t seq) {
  if (entries_ != 0 && at <= last_at_) return 0;
  const size_t before = bytes();
  if (entries_ % kBlock == 0) {
    if (checkpoints_.size() == checkpoints_.capacity()) checkpoints_.reserve(checkpoints_.size() * 5 / 4 + 8);
    checkpoints_.push_back(Checkpoint{at, seq, bytes_.size()});
  } else {
    if (bytes_.capacity() - bytes_.size() < 20) bytes_.reserve(bytes_.size() + bytes_.size() / 4 + 64);
    uint8_t* p = put_varint(room(bytes_, 20), static_cast<uint64_t>(at - last_at_));
    cut_to(bytes_, put_varint(p, seq - last_seq_));
  }
  last_at_ = at;
  last_seq_ = seq;
  ++entries_;
  return static_cast<int64_t>(bytes()) - static_cast<int64_t>(before);
}

uint64_t ClockIndex::seq_at(int64_t at, uint64_t last) const {
  auto next = std::upper_bound(checkpoints_.begin(), checkpoints_.end(), at,
                               [](int64_t t, const Checkpoint& c) { return t < c.at; });
  if (next == checkpoints_.begin()) return checkpoints_.empty() ? last : next->seq - 1;
  const Checkpoint& c = *(next - 1);
  const uint8_t* p = bytes_.data() + c.offset;
  const uint8_t* end = next == checkpoints_.end() ? bytes_.data() + bytes_.size() : bytes_.data() + next->offset;
  int64_t a = c.at;
  uint64_t s = c.seq;
  while (p < end) {
    a += static_cast<int64_t>(get_varint(p));
    s += get_varint(p);
    if (a > at) return s - 1;
  }
  return next == checkpoints_.end() ? last : next->seq - 1;
}

size_t ClockIndex::cut_before(uint64_t seq) {
  // The first checkpoint kept: the last one at or before `seq`, since every
  // entry of the blocks before it has a smaller seq.
  auto keep = std::upper_bound(checkpoints_.begin(), checkpoints_.end(), seq,
                               [](uint64_t s, const Checkpoint& c) { return s < c.seq; });
  if (keep == checkpoints_.begin() || --keep == checkpoints_.begin()) return 0;
  const size_t before = bytes(), from = keep->offset;
  // New vectors rather than erase: a cut is rare, and it is meant to give
  // the memory back.
  std::vector<Checkpoint> checkpoints(keep, checkpoints_.end());
  for (Checkpoint& c : checkpoints) c.offset -= from;
  std::vector<uint8_t> bytes(bytes_.begin() + static_cast<ptrdiff_t>(from), bytes_.end());
  entries_ -= static_cast<size_t>(keep - checkpoints_.begin()) * kBlock;
  checkpoints_ = std::move(checkpoints);
  bytes_ = std::move(bytes);
  return before - this->bytes();
}

}  // namespace oddsrelay::history
