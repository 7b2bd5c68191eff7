// The history segments' byte form (engine/history/segment_codec.h).
#include "engine/history/segment_codec.h"

#include <stdexcept>

#include "engine/history/varint.h"

namespace oddsrelay::history {

namespace {

void put_bytes(std::vector<uint8_t>& out, std::string_view s) {
  put_varint(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

std::string get_bytes(const uint8_t*& p) {
  const size_t n = get_varint(p);
  std::string s(reinterpret_cast<const char*>(p), n);
  p += n;
  return s;
}

void append_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(static_cast<uint8_t>(v) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

// A layout's bytes: per line its key and its outcome ids, as MarketLog
// interns them.
void layout_bytes(const feed::MarketRec& rec, std::string& out) {
  out.clear();
  for (const feed::LineIn& l : rec.lines) {
    append_varint(out, l.key.size());
    out += l.key;
    append_varint(out, l.count);
    for (uint32_t i = l.first; i < l.first + l.count; ++i) append_varint(out, rec.outcomes[i].id);
  }
}

// Calls fn(key, id) per outcome and line(key, count) per line of a layout.
template <class OnLine, class OnOutcome>
void parse_layout(const std::string& bytes, OnLine&& on_line, OnOutcome&& on_outcome) {
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

}  // namespace

uint32_t SegmentCodec::intern(Market& m, std::string bytes) {
  auto it = m.layout_of.find(bytes);
  if (it != m.layout_of.end()) return it->second;
  const auto index = static_cast<uint32_t>(m.layouts.size());
  std::vector<uint32_t> names;
  parse_layout(
      bytes, [](std::string_view, uint32_t) {},
      [&](std::string_view key, uint32_t id) {
        std::string name(key);
        name.push_back('\0');
        name.append(reinterpret_cast<const char*>(&id), sizeof id);
        auto [n, added] = m.name_of.emplace(std::move(name), static_cast<uint32_t>(m.quotes.size()));
        if (added) m.quotes.emplace_back();
        names.push_back(n->second);
      });
  m.layout_of.emplace(bytes, index);
  m.layouts.push_back(std::move(bytes));
  m.positions.push_back(std::move(names));
  return index;
}

void SegmentCodec::put_market(Market& m, const feed::MarketRec& rec, std::vector<uint8_t>& out) {
  layout_bytes(rec, scratch_);
  const bool full = !m.layout_of.contains(scratch_);  // new in this segment
  const uint32_t index = intern(m, scratch_);
  put_varint(out, uint64_t{index} << 1 | (full ? 1 : 0));
  if (full) put_bytes(out, m.layouts[index]);
  const std::vector<uint32_t>& names = m.positions[index];
  size_t k = 0;
  for (const feed::LineIn& l : rec.lines)
    for (uint32_t i = l.first; i < l.first + l.count; ++i, ++k) {
      const feed::OutcomeIn& oi = rec.outcomes[i];
      QuoteTail& q = m.quotes[names[k]];
      if (q.priced && q.price == oi.price && q.flags == oi.flags && q.s == l.suspended) continue;
      const bool quote = !q.priced || q.flags != oi.flags || q.s != l.suspended;
      put_varint(out, (k + 1) << 1 | (quote ? 1 : 0));
      put_varint(out, zigzag(int64_t{oi.price} - q.price));
      if (quote) put_varint(out, uint64_t{oi.flags} << 8 | l.suspended);
      q = QuoteTail{oi.price, oi.flags, l.suspended, true};
    }
  put_varint(out, 0);
}

void SegmentCodec::get_market(Market& m, const uint8_t*& p, feed::MarketRec& rec) {
  const uint64_t h = get_varint(p);
  const auto index = static_cast<uint32_t>(h >> 1);
  if (h & 1) {
    std::string bytes = get_bytes(p);
    if (index == m.layouts.size()) intern(m, std::move(bytes));
  }
  if (index >= m.layouts.size()) throw std::runtime_error("history segment: a layout never written");
  const std::vector<uint32_t>& names = m.positions[index];
  for (uint64_t c; (c = get_varint(p)) != 0;) {
    const size_t k = (c >> 1) - 1;
    if (k >= names.size()) throw std::runtime_error("history segment: an outcome past its layout");
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
      m.layouts[index],
      [&](std::string_view key, uint32_t count) {
        const uint8_t s = count > 0 ? m.quotes[names[k]].s : 0;
        rec.lines.push_back(feed::LineIn{std::string(key), s, static_cast<uint32_t>(rec.outcomes.size()), count});
      },
      [&](std::string_view, uint32_t id) {
        const QuoteTail& q = m.quotes[names[k++]];
        rec.outcomes.push_back(feed::OutcomeIn{id, q.price, q.flags});
      });
}

void SegmentCodec::put(uint64_t first_seq, uint64_t seq, std::span<const feed::Record> records,
                       const std::vector<uint64_t>& evicted, std::vector<uint8_t>& out) {
  put_varint(out, zigzag(static_cast<int64_t>(first_seq - last_seq_ - 1)));
  put_varint(out, records.size());
  put_varint(out, seq - first_seq + 1 - records.size());
  for (const feed::Record& r : records) {
    const feed::Op op = r.op();
    const uint64_t kind = op == feed::Op::Market ? 1 : op == feed::Op::Event ? 2 : op == feed::Op::Remove ? 3 : 0;
    Event* e = kind ? &events_[r.number] : nullptr;
    const bool id = e && e->id != r.id;  // new in this segment, or changed
    bool live = false;
    if (op == feed::Op::Event) {
      const auto& obj = std::get<std::shared_ptr<const feed::EventObject>>(r.body);
      live = obj && obj->live;
    }
    put_varint(out, kind | (id ? 4 : 0) | (live ? 8 : 0));
    put_varint(out, zigzag(r.at - last_at_));
    last_at_ = r.at;
    if (!kind) continue;
    put_varint(out, r.number);
    if (id) {
      e->id = r.id;
      put_bytes(out, r.id);
    }
    if (op != feed::Op::Market) continue;
    const auto& rec = std::get<feed::MarketRec>(r.body);
    put_varint(out, rec.market);
    put_market(e->markets[rec.market], rec, out);
  }
  put_varint(out, evicted.size());
  for (uint64_t n : evicted) {
    put_varint(out, n);
    events_.erase(n);
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
    Event& e = events_[r.number];
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
      get_market(e.markets[rec.market], p, rec);
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
