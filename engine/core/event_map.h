// A persistent (immutable, structurally shared) map from event number to
// EventEntry: the spine of every snapshot. Readers share it freely; the one
// writer path-copies what it changes, so publishing a new version costs the
// changed paths only, never the whole map.
//
// Shape: a fixed three-level hash trie, 32 x 32 inner slots and sorted leaf
// buckets (a few entries each at 10^4..10^5 events). Each node carries the
// `edit` number of the batch that created it; within one batch the writer
// mutates its own fresh nodes in place (a "transient"), since no reader can
// hold them before the batch is published.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "engine/core/event_entry.h"

namespace oddsrelay {

class EventMap {
 public:
  using EntryPtr = std::shared_ptr<EventEntry>;  // const to readers via find/for_each

  const EventEntry* find(uint64_t number) const {
    const EntryPtr* e = locate(number);
    return e ? e->get() : nullptr;
  }

  // The entry with shared ownership: holding it keeps that version alive
  // (and its address unique), e.g. as a cache key.
  std::shared_ptr<const EventEntry> find_shared(uint64_t number) const {
    const EntryPtr* e = locate(number);
    return e ? *e : nullptr;
  }

  size_t size() const { return size_; }

  // Visits every entry (hash order).
  template <class F>
  void for_each(F&& f) const {
    if (!root_) return;
    for (const auto& mid : root_->kids) {
      if (!mid) continue;
      for (const auto& leaf : mid->kids) {
        if (!leaf) continue;
        for (const auto& [num, e] : leaf->items) f(static_cast<const EventEntry&>(*e));
      }
    }
  }

  // Writer only. The slot for `number` (null if it had no entry), with every
  // node on its path owned by batch `edit`. The caller fills or replaces it;
  // leaving it null is undone by erase().
  EntryPtr& slot(uint64_t number, uint64_t edit) {
    uint64_t h = mix(number);
    own(root_, edit);
    auto& mid = root_->kids[h & kMask];
    own(mid, edit);
    auto& leaf = mid->kids[(h >> kBits) & kMask];
    own(leaf, edit);
    auto it = lower(leaf->items, number);
    if (it == leaf->items.end() || it->first != number) {
      it = leaf->items.insert(it, {number, nullptr});
      ++size_;
    }
    return it->second;
  }

  // Writer only.
  void erase(uint64_t number, uint64_t edit) {
    if (!locate(number)) return;
    uint64_t h = mix(number);
    own(root_, edit);
    auto& mid = root_->kids[h & kMask];
    own(mid, edit);
    auto& leaf = mid->kids[(h >> kBits) & kMask];
    own(leaf, edit);
    auto it = lower(leaf->items, number);
    if (it != leaf->items.end() && it->first == number) {
      leaf->items.erase(it);
      --size_;
    }
  }

 private:
  static constexpr int kBits = 5;
  static constexpr uint64_t kMask = (1u << kBits) - 1;
  using Items = std::vector<std::pair<uint64_t, EntryPtr>>;
  struct Leaf {
    uint64_t edit = 0;
    Items items;  // sorted by number
  };
  struct Mid {
    uint64_t edit = 0;
    std::array<std::shared_ptr<Leaf>, 1 << kBits> kids;
  };
  struct Root {
    uint64_t edit = 0;
    std::array<std::shared_ptr<Mid>, 1 << kBits> kids;
  };

  // Event numbers are often sequential: spread them over the trie.
  static uint64_t mix(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }

  static Items::const_iterator lower(const Items& v, uint64_t n) {
    size_t lo = 0, hi = v.size();
    while (lo < hi) {
      size_t m = (lo + hi) / 2;
      if (v[m].first < n)
        lo = m + 1;
      else
        hi = m;
    }
    return v.begin() + static_cast<ptrdiff_t>(lo);
  }
  static Items::iterator lower(Items& v, uint64_t n) {
    auto c = lower(static_cast<const Items&>(v), n);
    return v.begin() + (c - v.cbegin());
  }

  // The slot of `number`, or null when the map has none.
  const EntryPtr* locate(uint64_t number) const {
    if (!root_) return nullptr;
    uint64_t h = mix(number);
    const auto& mid = root_->kids[h & kMask];
    if (!mid) return nullptr;
    const auto& leaf = mid->kids[(h >> kBits) & kMask];
    if (!leaf) return nullptr;
    auto it = lower(leaf->items, number);
    return it != leaf->items.end() && it->first == number ? &it->second : nullptr;
  }

  // Makes `p` a node of batch `edit`: a copy if an older batch (and so maybe
  // a reader) shares it, a new node if there was none.
  template <class Node>
  static void own(std::shared_ptr<Node>& p, uint64_t edit) {
    if (!p)
      p = std::make_shared<Node>();
    else if (p->edit == edit)
      return;
    else
      p = std::make_shared<Node>(*p);
    p->edit = edit;
  }

  std::shared_ptr<Root> root_;
  size_t size_ = 0;
};

}  // namespace oddsrelay
