// The served market's storage and its one builder: a market record becomes
// one immutable block (engine/core/market.h). The engine builds every market
// of the state here; perf/apply's floor baseline builds with the same code,
// so that what it measures is exactly the market work without persistence.
#include "engine/core/market.h"

#include <algorithm>
#include <cstddef>
#include <new>
#include <type_traits>

#include "engine/core/odds_digest.h"

namespace oddsrelay {

namespace {

// Allocates the shared_ptr control block (which holds the Market) with
// `tail` more bytes after it, and reports where those start.
template <class T>
struct TailAllocator {
  using value_type = T;
  size_t tail;
  std::byte** tail_at;
  TailAllocator(size_t t, std::byte** at) : tail(t), tail_at(at) {}
  template <class U>
  TailAllocator(const TailAllocator<U>& o) : tail(o.tail), tail_at(o.tail_at) {}
  T* allocate(size_t n) {
    size_t head = (n * sizeof(T) + alignof(std::max_align_t) - 1) & ~(alignof(std::max_align_t) - 1);
    auto* p = static_cast<std::byte*>(::operator new(head + tail));
    *tail_at = p + head;
    return reinterpret_cast<T*>(p);
  }
  void deallocate(T* p, size_t) { ::operator delete(p); }
  template <class U>
  bool operator==(const TailAllocator<U>&) const {
    return true;
  }
};

}  // namespace

std::shared_ptr<Market> Market::make(uint32_t id, size_t nlines, size_t noutcomes, Line** lines, Outcome** outcomes) {
  static_assert(std::is_trivially_destructible_v<Line> && std::is_trivially_destructible_v<Outcome>,
                "the tail is released without running destructors");
  static_assert(sizeof(Line) % alignof(Outcome) == 0, "outcomes follow lines in one block");
  static_assert(std::is_aggregate_v<Line> && std::is_aggregate_v<Outcome> && std::is_trivially_copyable_v<Line> &&
                    std::is_trivially_copyable_v<Outcome>,
                "implicit-lifetime types: the allocation creates them, no constructor runs");
  std::byte* tail = nullptr;
  auto m =
      std::allocate_shared<Market>(TailAllocator<Market>(nlines * sizeof(Line) + noutcomes * sizeof(Outcome), &tail));
  m->id = id;
  // Not zeroed first: every builder writes every field of every line and
  // outcome, and zeroing them cost a tenth of building a market.
  *lines = std::launder(reinterpret_cast<Line*>(tail));
  *outcomes = std::launder(reinterpret_cast<Outcome*>(tail + nlines * sizeof(Line)));
  m->lines = std::span<const Line>(*lines, nlines);
  m->outcomes = std::span<const Outcome>(*outcomes, noutcomes);
  return m;
}

const Market* find_market(const MarketList& markets, uint32_t market_id) {
  auto it = std::lower_bound(markets.begin(), markets.end(), market_id,
                             [](const MarketRef& m, uint32_t id) { return m.id < id; });
  return it != markets.end() && it->id == market_id ? it->ptr.get() : nullptr;
}

// Lines and outcomes usually keep their positions from one record to the
// Lines and outcomes usually keep their positions from one record to the
// next, so the same index is tried before a scan.
MarketPtr build_market(const feed::MarketRec& rec, const Market* prev, int64_t at, uint64_t event) {
  Line* lines;
  Outcome* outs;
  auto m = Market::make(rec.market, rec.lines.size(), rec.outcomes.size(), &lines, &outs);
  uint32_t next = 0;
  for (size_t li = 0; li < rec.lines.size(); ++li) {
    const feed::LineIn& in = rec.lines[li];
    Line& line = lines[li];
    line.key = LineKey(in.key);
    line.suspended = in.suspended;
    line.first = next;
    line.count = in.count;
    line.ls = at;
    const Line* pl = nullptr;
    if (prev) {
      if (li < prev->lines.size() && prev->lines[li].key == line.key)
        pl = &prev->lines[li];
      else
        for (const Line& c : prev->lines)
          if (c.key == line.key) {
            pl = &c;
            break;
          }
    }
    for (uint32_t oi = 0; oi < in.count; ++oi) {
      const feed::OutcomeIn& o = rec.outcomes[in.first + oi];
      Outcome& out = outs[next++];
      out = Outcome{o.id, o.price, o.flags, o.price, at};
      if (pl) {
        const Outcome* po = nullptr;
        if (oi < pl->count && prev->outcomes[pl->first + oi].id == o.id)
          po = &prev->outcomes[pl->first + oi];
        else
          for (uint32_t k = 0; k < pl->count; ++k)
            if (prev->outcomes[pl->first + k].id == o.id) {
              po = &prev->outcomes[pl->first + k];
              break;
            }
        if (po) {
          if (po->price == o.price && po->flags == o.flags) out.ts = po->ts;
          out.prev_price = po->price == o.price ? po->prev_price : po->price;
        }
      }
    }
  }
  m->digest = market_digest(event, *m);
  return m;
}

}  // namespace oddsrelay
