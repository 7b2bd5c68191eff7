// Which log position a feed time names, for GET /v1/odds?at=: each time
// the feed clock (the newest `at` applied) moves on, the `at` and the seq
// of the record that moved it, as varint deltas (2-4 bytes a record rather
// than the 16 of a pair), with an absolute checkpoint every kBlock entries
// so that a look-up decodes one block after a binary search.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace oddsrelay::history {

class ClockIndex {
 public:
  static constexpr size_t kBlock = 128;

  // A record at `at`, position `seq` (seqs increase); kept only when `at`
  // is past every `at` before it. Returns the bytes the index grew by.
  int64_t add(int64_t at, uint64_t seq);
  // The position just before the first record whose `at` is past `at`
  // (for a feed in time order: the last record with `at` <= it); `last`
  // when no record is past it; 0 before the first record.
  uint64_t seq_at(int64_t at, uint64_t last) const;
  // The memory bound's cut: drops the blocks whose entries are all before
  // `seq` (a block goes whole, so up to kBlock entries before it stay).
  // seq_at of a time before what is left is then below `seq`, which the
  // store refuses as before held_from_seq. Returns the bytes freed.
  size_t cut_before(uint64_t seq);
  size_t bytes() const { return bytes_.capacity() + checkpoints_.capacity() * sizeof(Checkpoint); }

 private:
  struct Checkpoint {
    int64_t at = 0;
    uint64_t seq = 0;
    size_t offset = 0;  // where the entries after it are encoded
  };
  std::vector<Checkpoint> checkpoints_;
  std::vector<uint8_t> bytes_;
  int64_t last_at_ = 0;
  uint64_t last_seq_ = 0;
  size_t entries_ = 0;
};

}  // namespace oddsrelay::history
