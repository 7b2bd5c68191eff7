// The history segments' byte form (engine/history/segment_codec.h).
#include "engine/history/segment_codec.h"

#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>

#include "engine/history/varint.h"

namespace oddsrelay::history {

namespace {

void put_bytes(std::vector<uint8_t>& out, std::string_view s) {
  put_varint(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

std::string_view get_bytes(const uint8_t*& p) {
  const size_t n = get_varint(p);
  std::string_view s(reinterpret_cast<const char*>(p), n);
  p += n;
  return s;
}

// A layout's bytes: per line its key and its outcome ids, as MarketLog
// interns them.
void layout_bytes(const feed::MarketRec& rec, std::string& out) {
  size_t most = 0;  // a length's varint, the key, the count's, 5 bytes an id
  for (const feed::LineIn& l : rec.lines) most += 10 + l.key.size() + 5 + 5 * size_t{l.count};
  out.clear();
  uint8_t* p = room(out, most);
  for (const feed::LineIn& l : rec.lines) {
    p = put_varint(p, l.key.size());
    std::memcpy(p, l.key.data(), l.key.size());
    p += l.key.size();
    p = put_varint(p, l.count);
    for (uint32_t i = l.first; i < l.first + l.count; ++i) p = put_varint(p, rec.outcomes[i].id);
  }
  cut_to(out, p);
}

// Whether `bytes` (a layout's, as layout_bytes writes them) are rec's
// layout: both walked at once, so that a record repeating its market's
// last layout (four in five do) is matched without writing its bytes,
// which cost more than the rest of its encoding.
bool same_layout(std::string_view bytes, const feed::MarketRec& rec) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  const uint8_t* const end = p + bytes.size();
  for (const feed::LineIn& l : rec.lines) {
    if (p == end || get_varint(p) != l.key.size() || static_cast<size_t>(end - p) < l.key.size() ||
        std::memcmp(p, l.key.data(), l.key.size()) != 0)
      return false;
    p += l.key.size();
    if (p == end || get_varint(p) != l.count) return false;
    for (uint32_t i = l.first; i < l.first + l.count; ++i)
      if (p == end || get_varint(p) != rec.outcomes[i].id) return false;
  }
  return p == end;
}

// Calls fn(key, id) per outcome and line(key, count) per line of a layout.
template <class OnLine, class OnOutcome>
void parse_layout(std::string_view bytes, OnLine&& on_line, OnOutcome&& on_outcome) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  const uint8_t* end = p + bytes.size();
  while (p < end) {
    const size_t len = get_varint(p);
    std::string_view key(reinterpret_cast<const char*>(p), len);
    p += len;
    const uint32_t count = static_cast<uint32_t>(get_varint(p));
    on_line(key, count);
    for (uint32_t i = 0; i < count; ++i) on_outcome(key, static_cast<uint32_t>(get_varint(p)));
  }
}

// Layouts or names a market has before it indexes them by hash.
constexpr size_t kScan = 32;

// Past kScan entries, the index holds them all; a lookup checks each
// candidate's bytes, so a hash collision costs a compare, never a wrong
// number.
template <class Index, class Same>
int64_t find_hashed(const Index& index, size_t n, uint64_t hash, Same&& same) {
  if (n <= kScan) {
    for (uint32_t i = 0; i < n; ++i)
      if (same(i)) return i;
    return -1;
  }
  const size_t mask = index.slots.size() - 1;
  const uint64_t high = hash >> 32 << 32;
  for (size_t i = hash & mask; index.slots[i] != 0; i = (i + 1) & mask)
    if ((index.slots[i] >> 32 << 32) == high && same(static_cast<uint32_t>(index.slots[i]) - 1))
      return static_cast<uint32_t>(index.slots[i]) - 1;
  return -1;
}

template <class Index>
void index_put(Index& index, uint64_t hash, uint32_t number) {
  const size_t mask = index.slots.size() - 1;
  size_t i = hash & mask;
  while (index.slots[i] != 0) i = (i + 1) & mask;
  index.slots[i] = (hash >> 32 << 32) | (uint64_t{number} + 1);
}

// Indexes the entry added last (all of them when the index starts or
// grows past half full).
template <class Index, class Entry>
void index_added(Index& index, const std::vector<Entry>& entries) {
  const size_t n = entries.size();
  if (n <= kScan) return;
  if (2 * n > index.slots.size()) {
    index.slots.assign(std::bit_ceil(4 * n), 0);
    for (uint32_t i = 0; i < n; ++i) index_put(index, entries[i].hash, i);
  } else {
    index_put(index, entries.back().hash, static_cast<uint32_t>(n - 1));
  }
}

// A container node's bytes besides its value, about.
constexpr size_t kNodeBytes = 32;

}  // namespace

int64_t SegmentCodec::find_layout(const Market& m, std::string_view bytes, uint64_t hash) {
  return find_hashed(m.layout_index, m.layouts.size(), hash, [&](uint32_t i) {
    const Market::Layout& l = m.layouts[i];
    return l.hash == hash && m.layout_bytes(i) == bytes;
  });
}

uint32_t SegmentCodec::name_of(Market& m, uint32_t key_at, uint32_t key_len, uint32_t id) {
  const std::string_view key(m.bytes.data() + key_at, key_len);
  const uint64_t hash = XXH3_64bits_withSeed(key.data(), key.size(), id);
  const int64_t found = find_hashed(m.name_index, m.name_keys.size(), hash, [&](uint32_t i) {
    const Market::Name& n = m.name_keys[i];
    return n.hash == hash && n.id == id && std::string_view(m.bytes.data() + n.key_at, n.key_len) == key;
  });
  if (found >= 0) return static_cast<uint32_t>(found);
  m.name_keys.push_back(Market::Name{hash, key_at, key_len, id});
  m.quotes.emplace_back();
  held_ += sizeof(Market::Name) + sizeof(QuoteTail);
  index_added(m.name_index, m.name_keys);
  return static_cast<uint32_t>(m.name_keys.size() - 1);
}

uint32_t SegmentCodec::add_layout(Market& m, std::string_view bytes, uint64_t hash) {
  Market::Layout l;
  l.hash = hash;
  l.at = static_cast<uint32_t>(m.bytes.size());
  l.len = static_cast<uint32_t>(bytes.size());
  l.names = static_cast<uint32_t>(m.names.size());
  m.bytes.append(bytes);
  parse_layout(
      std::string_view(m.bytes.data() + l.at, l.len), [](std::string_view, uint32_t) {},
      [&](std::string_view key, uint32_t id) {
        m.names.push_back(
            name_of(m, static_cast<uint32_t>(key.data() - m.bytes.data()), static_cast<uint32_t>(key.size()), id));
      });
  l.count = static_cast<uint32_t>(m.names.size()) - l.names;
  m.layouts.push_back(l);
  held_ += bytes.size() + sizeof l + l.count * sizeof(uint32_t);
  index_added(m.layout_index, m.layouts);
  return static_cast<uint32_t>(m.layouts.size() - 1);
}

SegmentCodec::Event& SegmentCodec::event(uint64_t number) {
  auto [it, added] = events_.try_emplace(number);
  if (added) held_ += sizeof(Event) + kNodeBytes;
  return it->second;
}

SegmentCodec::Market& SegmentCodec::market(Event& e, uint32_t id) {
  auto [it, added] = e.markets.try_emplace(id);
  if (added) held_ += sizeof(Market) + kNodeBytes;
  return it->second;
}

SegmentCodec::Bytes SegmentCodec::bytes() const {
  // An unordered container's node: its value and the next pointer (the
  // hash is not cached for integer keys); a bucket is a pointer.
  auto map_bytes = [](const auto& m, size_t value) { return m.size() * (value + 8) + m.bucket_count() * 8; };
  Bytes b;
  b.heads = map_bytes(events_, sizeof(uint64_t) + sizeof(Event));
  for (const auto& [number, e] : events_) {
    b.heads += e.id.capacity() + map_bytes(e.markets, sizeof(uint32_t) + sizeof(Market));
    for (const auto& [id, m] : e.markets) {
      b.layouts +=
          m.bytes.capacity() + m.layouts.capacity() * sizeof(Market::Layout) + m.names.capacity() * sizeof(uint32_t);
      b.names += m.name_keys.capacity() * sizeof(Market::Name) + m.quotes.capacity() * sizeof(QuoteTail);
      b.indexes += (m.layout_index.slots.capacity() + m.name_index.slots.capacity()) * sizeof(uint64_t);
    }
  }
  return b;
}

void SegmentCodec::put_market(Market& m, const feed::MarketRec& rec, std::vector<uint8_t>& out) {
  uint32_t index;
  bool full = false;  // new in this segment: its bytes follow
  if (m.last >= 0 && same_layout(m.layout_bytes(static_cast<uint32_t>(m.last)), rec)) {
    index = static_cast<uint32_t>(m.last);
  } else {
    layout_bytes(rec, scratch_);
    const uint64_t hash = XXH3_64bits(scratch_.data(), scratch_.size());
    const int64_t found = find_layout(m, scratch_, hash);
    full = found < 0;
    index = full ? add_layout(m, scratch_, hash) : static_cast<uint32_t>(found);
  }
  m.last = static_cast<int32_t>(index);
  put_varint(out, uint64_t{index} << 1 | (full ? 1 : 0));
  if (full) put_bytes(out, m.layout_bytes(index));
  const uint32_t* names = m.names.data() + m.layouts[index].names;
  // A changed outcome takes at most 5 + 5 + 6 bytes (its position, the
  // price's difference, flags and s), the list its closing 0.
  uint8_t* p = room(out, 16 * size_t{m.layouts[index].count} + 1);
  size_t k = 0;
  for (const feed::LineIn& l : rec.lines)
    for (uint32_t i = l.first; i < l.first + l.count; ++i, ++k) {
      const feed::OutcomeIn& oi = rec.outcomes[i];
      QuoteTail& q = m.quotes[names[k]];
      if (q.priced && q.price == oi.price && q.flags == oi.flags && q.s == l.suspended) continue;
      const bool quote = !q.priced || q.flags != oi.flags || q.s != l.suspended;
      p = put_varint(p, (k + 1) << 1 | (quote ? 1 : 0));
      p = put_varint(p, zigzag(int64_t{oi.price} - q.price));
      if (quote) p = put_varint(p, uint64_t{oi.flags} << 8 | l.suspended);
      q = QuoteTail{oi.price, oi.flags, l.suspended, true};
    }
  *p++ = 0;
  cut_to(out, p);
}

void SegmentCodec::get_market(Market& m, const uint8_t*& p, feed::MarketRec& rec) {
  const uint64_t h = get_varint(p);
  const auto index = static_cast<uint32_t>(h >> 1);
  if (h & 1) {
    const std::string_view bytes = get_bytes(p);
    if (index == m.layouts.size()) {
      const uint64_t hash = XXH3_64bits(bytes.data(), bytes.size());
      if (find_layout(m, bytes, hash) < 0) add_layout(m, bytes, hash);
    }
  }
  if (index >= m.layouts.size()) throw std::runtime_error("history segment: a layout never written");
  const uint32_t* names = m.names.data() + m.layouts[index].names;
  const size_t count = m.layouts[index].count;
  for (uint64_t c; (c = get_varint(p)) != 0;) {
    const size_t k = (c >> 1) - 1;
    if (k >= count) throw std::runtime_error("history segment: an outcome past its layout");
    QuoteTail& q = m.quotes[names[k]];
    q.price = static_cast<int32_t>(q.price + unzigzag(get_varint(p)));
    if (c & 1) {
      const uint64_t v = get_varint(p);
      q.flags = static_cast<uint32_t>(v >> 8);
      q.s = static_cast<uint8_t>(v & 0xff);
    }
    q.priced = true;
  }
  size_t k = 0;
  parse_layout(
      m.layout_bytes(index),
      [&](std::string_view key, uint32_t count) {
        const uint8_t s = count > 0 ? m.quotes[names[k]].s : 0;
        rec.lines.push_back(feed::LineIn{std::string(key), s, static_cast<uint32_t>(rec.outcomes.size()), count});
      },
      [&](std::string_view, uint32_t id) {
        const QuoteTail& q = m.quotes[names[k++]];
        rec.outcomes.push_back(feed::OutcomeIn{id, q.price, q.flags});
      });
}

SegmentCodec::Target SegmentCodec::target(const feed::Record& r) {
  const feed::Op op = r.op();
  if (op != feed::Op::Market && op != feed::Op::Event && op != feed::Op::Remove) return {};
  Target t;
  t.event = &event(r.number);
  __builtin_prefetch(t.event->id.data());
  if (op != feed::Op::Market) return t;
  const auto& rec = std::get<feed::MarketRec>(r.body);
  t.market = &market(*t.event, rec.market);
  __builtin_prefetch(t.market);
  __builtin_prefetch(reinterpret_cast<const char*>(t.market) + 64);
  __builtin_prefetch(rec.lines.data());
  __builtin_prefetch(rec.outcomes.data());
  return t;
}

void SegmentCodec::fetch_layout(const Target& t) {
  if (t.market && t.market->last >= 0) __builtin_prefetch(&t.market->layouts[static_cast<uint32_t>(t.market->last)]);
}

void SegmentCodec::fetch_names(const Target& t) {
  if (!t.market || t.market->last < 0) return;
  const Market& m = *t.market;
  const Market::Layout& l = m.layouts[static_cast<uint32_t>(m.last)];
  __builtin_prefetch(m.bytes.data() + l.at);
  __builtin_prefetch(m.names.data() + l.names);
}

void SegmentCodec::fetch_quotes(const Target& t) {
  if (!t.market || t.market->last < 0) return;
  const Market& m = *t.market;
  const Market::Layout& l = m.layouts[static_cast<uint32_t>(m.last)];
  const uint32_t* names = m.names.data() + l.names;
  for (uint32_t k = 0; k < l.count; ++k) __builtin_prefetch(m.quotes.data() + names[k]);
}

void SegmentCodec::put_record(const feed::Record& r, const Target& t, std::vector<uint8_t>& out) {
  const feed::Op op = r.op();
  const uint64_t kind = op == feed::Op::Market ? 1 : op == feed::Op::Event ? 2 : op == feed::Op::Remove ? 3 : 0;
  Event* e = t.event;
  const bool id = e && e->id != r.id;  // new in this segment, or changed
  bool live = false;
  if (op == feed::Op::Event) {
    const auto& obj = std::get<std::shared_ptr<const feed::EventObject>>(r.body);
    live = obj && obj->live;
  }
  // The tag, the time's difference, the event's number and the market's
  // id take at most 1 + 10 + 10 + 5 bytes; an id that follows goes after
  // the number, in bytes of its own.
  uint8_t* p = room(out, 26);
  p = put_varint(p, kind | (id ? 4 : 0) | (live ? 8 : 0));
  p = put_varint(p, zigzag(r.at - last_at_));
  last_at_ = r.at;
  if (kind) p = put_varint(p, r.number);
  if (id) {
    cut_to(out, p);
    e->id = r.id;
    put_bytes(out, r.id);
    p = room(out, 5);
  }
  if (op == feed::Op::Market) p = put_varint(p, std::get<feed::MarketRec>(r.body).market);
  cut_to(out, p);
  if (op == feed::Op::Market) put_market(*t.market, std::get<feed::MarketRec>(r.body), out);
}

void SegmentCodec::put(uint64_t first_seq, uint64_t seq, std::span<const feed::Record> records,
                       const std::vector<uint64_t>& evicted, std::vector<uint8_t>& out) {
  put_varint(out, zigzag(static_cast<int64_t>(first_seq - last_seq_ - 1)));
  put_varint(out, records.size());
  put_varint(out, seq - first_seq + 1 - records.size());
  // Each record's state is looked up kAhead records before its bytes are
  // written, and the levels under it fetched kLayout, kNames and kQuotes
  // records before (Target). Nodes of the maps do not move, and nothing is erased before
  // the batch's end, so the targets stay valid while the records before
  // them are written; a prefetch past a layout an earlier record of the
  // same market changes is only a wasted fetch.
  constexpr size_t kAhead = 16, kLayout = 8, kNames = 5, kQuotes = 3;
  const size_t n = records.size();
  targets_.resize(n);
  for (size_t i = 0; i < std::min(n, kAhead); ++i) targets_[i] = target(records[i]);
  for (size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) targets_[i + kAhead] = target(records[i + kAhead]);
    if (i + kLayout < n) fetch_layout(targets_[i + kLayout]);
    if (i + kNames < n) fetch_names(targets_[i + kNames]);
    if (i + kQuotes < n) fetch_quotes(targets_[i + kQuotes]);
    put_record(records[i], targets_[i], out);
  }
  put_varint(out, evicted.size());
  for (uint64_t number : evicted) {
    put_varint(out, number);
    events_.erase(number);
  }
  last_seq_ = seq;
}

void SegmentCodec::get(const uint8_t*& p, LoggedBatch& b) {
  b.first_seq = last_seq_ + 1 + static_cast<uint64_t>(unzigzag(get_varint(p)));
  const size_t n = get_varint(p);
  b.seq = b.first_seq + n - 1 + get_varint(p);
  b.records.clear();
  b.records.resize(n);
  for (feed::Record& r : b.records) {
    const uint64_t tag = get_varint(p);
    r.at = last_at_ += unzigzag(get_varint(p));
    const uint64_t kind = tag & 3;
    if (kind == 0) {
      r.body = feed::StatsRec{};  // a record the history reads only the `at` of: a score, stats
      continue;
    }
    r.number = get_varint(p);
    Event& e = event(r.number);
    if (tag & 4) e.id = get_bytes(p);
    r.id = e.id;
    if (kind == 3) {
      r.body = feed::RemoveRec{};
    } else if (kind == 2) {
      auto obj = std::make_shared<feed::EventObject>();
      obj->live = (tag & 8) != 0;
      r.body = std::shared_ptr<const feed::EventObject>(std::move(obj));
    } else {
      feed::MarketRec rec;
      rec.market = static_cast<uint32_t>(get_varint(p));
      get_market(market(e, rec.market), p, rec);
      r.body = std::move(rec);
    }
  }
  b.evicted.resize(get_varint(p));
  for (uint64_t& n : b.evicted) {
    n = get_varint(p);
    events_.erase(n);
  }
  last_seq_ = b.seq;
}

}  // namespace oddsrelay::history
