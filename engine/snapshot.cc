#include "engine/snapshot.h"

namespace oddsrelay {

// All atomics here are seq_cst: the argument below needs one total order of
// a reader's phase registration and the writer's flip.

SnapshotStore::SnapshotStore() : cur_(new Box{std::make_shared<const Snapshot>()}) {}

SnapshotStore::~SnapshotStore() {
  delete cur_.load();
  for (Box* b : retired_now_) delete b;
  for (Box* b : retired_flipped_) delete b;
}

SnapshotPtr SnapshotStore::load() const {
  uint32_t p;
  for (;;) {
    p = phase_.load();
    readers_[p].fetch_add(1);
    // If the writer flipped in between, our registration may have come too
    // late for it to see: back out and register in the new phase.
    if (phase_.load() == p) break;
    readers_[p].fetch_sub(1);
  }
  SnapshotPtr s = cur_.load()->snap;
  readers_[p].fetch_sub(1);
  return s;
}

void SnapshotStore::publish(SnapshotPtr s) {
  Box* old = cur_.exchange(new Box{std::move(s)});
  retired_now_.push_back(old);
  reclaim();
}

// A box retired before a flip can only be in the hands of readers registered
// in the phase before the flip (later readers load cur_ after the flip, and
// cur_ had already moved on). So once that phase's count drops to zero,
// those boxes are free; then flip again for the boxes retired since.
void SnapshotStore::reclaim() {
  if (!retired_flipped_.empty()) {
    if (readers_[phase_.load() ^ 1].load() != 0) return;  // readers still inside: try next publish
    for (Box* b : retired_flipped_) delete b;
    retired_flipped_.clear();
  }
  if (retired_now_.empty()) return;
  retired_flipped_.swap(retired_now_);
  phase_.store(phase_.load() ^ 1);
}

}  // namespace oddsrelay
