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
    put_varint(bytes_, static_cast<uint64_t>(at - last_at_));
    put_varint(bytes_, seq - last_seq_);
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

}  // namespace oddsrelay::history
