#include "engine/core/packed_lines.h"

#include <cstring>
#include <string_view>

namespace oddsrelay {

namespace {

// Layout, every number an LEB128 varint, signed ones zigzag-coded:
//   market:  id, lines, outcomes, then its lines
//   line:    key length, key bytes, count << 8 | suspended, ls - previous ls
//            (the previous line's of the whole blob; 0 before the first)
//   outcome: id, price, flags, prev_price - price, ls - ts
// Lines withdrawn together share their `ls`, and an outcome's ts trails its
// line's by seconds to minutes, so both deltas take a byte or three.

// Timestamps come from the feed: their differences wrap (two's complement)
// rather than overflow, and wrap back when added.
int64_t wrap_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

void put(PackedLines& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}
void put_signed(PackedLines& out, int64_t v) {
  put(out, (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
}

// Only reads what pack_lines wrote: no bounds to check but the end.
class Reader {
 public:
  explicit Reader(const PackedLines& in) : p_(in.data()), end_(in.data() + in.size()) {}
  bool done() const { return p_ >= end_; }
  uint64_t get() {
    uint64_t v = 0;
    for (int shift = 0; p_ < end_; shift += 7) {
      const uint8_t b = *p_++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) break;
    }
    return v;
  }
  int64_t get_signed() {
    const uint64_t v = get();
    return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
  }
  std::string_view bytes(size_t n) {
    std::string_view s(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return s;
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

}  // namespace

PackedLines pack_lines(const MarketList& markets) {
  thread_local PackedLines scratch;
  scratch.clear();
  int64_t ls = 0;
  for (const MarketRef& ref : markets) {
    const Market& m = *ref;
    put(scratch, m.id);
    put(scratch, m.lines.size());
    put(scratch, m.outcomes.size());
    for (const Line& l : m.lines) {
      const std::string_view key = l.key.view();
      scratch.push_back(static_cast<uint8_t>(key.size()));
      scratch.insert(scratch.end(), key.begin(), key.end());
      put(scratch, uint64_t{l.count} << 8 | l.suspended);
      put_signed(scratch, wrap_sub(l.ls, ls));
      ls = l.ls;
      for (uint32_t k = l.first; k < l.first + l.count; ++k) {
        const Outcome& o = m.outcomes[k];
        put(scratch, o.id);
        put_signed(scratch, o.price);
        put(scratch, o.flags);
        put_signed(scratch, int64_t{o.prev_price} - o.price);
        put_signed(scratch, wrap_sub(l.ls, o.ts));
      }
    }
  }
  return PackedLines(scratch.begin(), scratch.end());
}

MarketList unpack_lines(const PackedLines& packed) {
  MarketList out;
  Reader r(packed);
  int64_t ls = 0;
  while (!r.done()) {
    const auto id = static_cast<uint32_t>(r.get());
    const size_t nlines = r.get(), nouts = r.get();
    Line* lines;
    Outcome* outs;
    auto m = Market::make(id, nlines, nouts, &lines, &outs);
    uint32_t next = 0;
    for (size_t i = 0; i < nlines; ++i) {
      Line& l = lines[i];
      l.key = LineKey(r.bytes(r.get()));
      const uint64_t cs = r.get();
      l.count = static_cast<uint32_t>(cs >> 8);
      l.suspended = static_cast<uint8_t>(cs);
      l.ls = ls = wrap_add(ls, r.get_signed());
      l.first = next;
      for (uint32_t k = 0; k < l.count; ++k) {
        Outcome& o = outs[next++];
        o.id = static_cast<uint32_t>(r.get());
        o.price = static_cast<int32_t>(r.get_signed());
        o.flags = static_cast<uint32_t>(r.get());
        o.prev_price = static_cast<int32_t>(o.price + r.get_signed());
        o.ts = wrap_sub(l.ls, r.get_signed());
      }
    }
    out.push_back(MarketRef{id, std::move(m)});
  }
  return out;
}

}  // namespace oddsrelay
