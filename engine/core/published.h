// Publication of an immutable object from one writer thread to any number of
// readers: the current snapshot, the current API keys. A two-phase epoch
// scheme rather than std::atomic<shared_ptr>, whose libstdc++ 12 form spins
// on a lock bit and uses fences ThreadSanitizer cannot check:
//   load()    wait-free in practice: register in the current phase's reader
//             count, copy the shared_ptr out of the current box, unregister.
//   publish() never waits: swap in a new box and retire the old one; retired
//             boxes are freed once the phase they were retired in has no
//             readers left (checked again at each publish).
// The object itself lives as long as any reader's shared_ptr holds it. All
// atomics are seq_cst: the argument in reclaim() needs one total order of a
// reader's registration and the writer's flip.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace oddsrelay {

template <class T>
class Published {
 public:
  using Ptr = std::shared_ptr<const T>;

  explicit Published(Ptr initial) : cur_(new Box{std::move(initial)}) {}
  ~Published() {
    delete cur_.load();
    for (Box* b : retired_now_) delete b;
    for (Box* b : retired_flipped_) delete b;
  }
  Published(const Published&) = delete;
  Published& operator=(const Published&) = delete;

  Ptr load() const {  // any thread
    uint32_t p;
    for (;;) {
      p = phase_.load();
      readers_[p].fetch_add(1);
      // If the writer flipped in between, our registration may have come too
      // late for it to see: back out and register in the new phase.
      if (phase_.load() == p) break;
      readers_[p].fetch_sub(1);
    }
    Ptr s = cur_.load()->value;
    readers_[p].fetch_sub(1);
    return s;
  }

  void publish(Ptr v) {  // the one writer thread only
    retired_now_.push_back(cur_.exchange(new Box{std::move(v)}));
    reclaim();
  }

  size_t retired() const { return retired_now_.size() + retired_flipped_.size(); }  // writer only

  // Where the writer's last reference to a retired value goes once no
  // reader can reach its box (the engine hands old snapshots to a
  // Reclaimer); unset, it is dropped on the writer's thread. Set before the
  // first publish.
  void set_disposer(std::function<void(Ptr&&)> fn) { dispose_ = std::move(fn); }

 private:
  struct Box {
    Ptr value;
  };

  // A box retired before a flip can only be in the hands of readers
  // registered in the phase before the flip (later readers load cur_ after
  // the flip, and cur_ had already moved on). Once that phase's count is
  // zero those boxes are free; then flip again for the ones retired since.
  void reclaim() {
    if (!retired_flipped_.empty()) {
      if (readers_[phase_.load() ^ 1].load() != 0) return;  // readers still inside: next publish
      for (Box* b : retired_flipped_) {
        if (dispose_) dispose_(std::move(b->value));
        delete b;
      }
      retired_flipped_.clear();
    }
    if (retired_now_.empty()) return;
    retired_flipped_.swap(retired_now_);
    phase_.store(phase_.load() ^ 1);
  }

  std::atomic<Box*> cur_;
  mutable std::atomic<uint32_t> readers_[2] = {0, 0};
  std::atomic<uint32_t> phase_{0};
  std::vector<Box*> retired_now_, retired_flipped_;  // writer only
  std::function<void(Ptr&&)> dispose_;
};

}  // namespace oddsrelay
