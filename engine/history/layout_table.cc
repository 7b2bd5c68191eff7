// The store-wide layouts (engine/history/layout_table.h).
#include "engine/history/layout_table.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "engine/history/varint.h"

namespace oddsrelay::history {

namespace {

size_t key_length(const feed::LineIn& in) {
  return std::min<size_t>(in.key.size(), kMaxLineKey);
}  // as LineKey keeps it

void layout_of(const feed::MarketRec& rec, std::vector<uint8_t>& out) {
  out.clear();
  for (const feed::LineIn& in : rec.lines) {
    const size_t n = key_length(in);
    out.push_back(static_cast<uint8_t>(n));
    out.insert(out.end(), in.key.begin(), in.key.begin() + static_cast<ptrdiff_t>(n));
    put_varint(out, in.count);
    for (uint32_t j = 0; j < in.count; ++j) put_varint(out, rec.outcomes[in.first + j].id);
  }
}

// Eight bytes a step (a byte a step was most of an intern's cost).
uint64_t hash_of(const std::vector<uint8_t>& b) {
  uint64_t h = 0xcbf29ce484222325ull ^ b.size();
  size_t i = 0;
  for (; i + 8 <= b.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, b.data() + i, 8);
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
  }
  uint64_t w = 0;
  std::memcpy(&w, b.data() + i, b.size() - i);
  h = (h ^ w) * 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 32);
}

}  // namespace

bool LayoutTable::same(uint32_t id, const feed::MarketRec& rec) const {
  const uint8_t* p = bytes_.data() + at_[id];
  const uint8_t* end = bytes_.data() + at_[id + 1];
  for (const feed::LineIn& in : rec.lines) {
    const size_t n = key_length(in);
    if (p == end || *p++ != n) return false;
    // Keys are a few bytes: a loop, not a call to memcmp.
    for (size_t k = 0; k < n; ++k)
      if (*p++ != static_cast<uint8_t>(in.key[k])) return false;
    if (get_varint(p) != in.count) return false;
    for (uint32_t j = 0; j < in.count; ++j)
      if (get_varint(p) != rec.outcomes[in.first + j].id) return false;
  }
  return p == end;
}

uint32_t LayoutTable::intern(const feed::MarketRec& rec) {
  thread_local std::vector<uint8_t> b;
  layout_of(rec, b);
  const uint64_t h = hash_of(b);
  auto [it, added] = by_hash_.try_emplace(h, UINT32_MAX);
  for (uint32_t i = it->second; i != UINT32_MAX; i = next_[i])
    if (at_[i + 1] - at_[i] == b.size() && std::equal(b.begin(), b.end(), bytes_.begin() + at_[i])) return i;
  if (at_.empty()) at_.push_back(0);
  // Grown by a quarter, as the logs are: these bytes are counted too.
  if (bytes_.capacity() - bytes_.size() < b.size()) bytes_.reserve(bytes_.size() + bytes_.size() / 4 + b.size());
  bytes_.insert(bytes_.end(), b.begin(), b.end());
  at_.push_back(static_cast<uint32_t>(bytes_.size()));
  const auto id = static_cast<uint32_t>(next_.size());
  next_.push_back(it->second);
  it->second = id;
  return id;
}

size_t LayoutTable::LineHash::operator()(const LineKey& k) const {
  uint64_t w[2];
  std::memcpy(w, &k, sizeof w);
  const uint64_t h = (w[0] ^ (w[1] * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
  return static_cast<size_t>(h ^ (h >> 32));
}

uint32_t LayoutTable::line_id(const LineKey& key) {
  auto [it, added] = line_ids_.try_emplace(key, static_cast<uint32_t>(lines_.size()));
  if (added) lines_.push_back(key);
  return it->second;
}

MarketLayout LayoutTable::layout(uint32_t id) const {
  MarketLayout out;
  const uint8_t* p = bytes_.data() + at_[id];
  const uint8_t* end = bytes_.data() + at_[id + 1];
  while (p < end) {
    const size_t n = *p++;
    LineLayout line{LineKey(std::string_view(reinterpret_cast<const char*>(p), n)), {}};
    p += n;
    const uint64_t count = get_varint(p);
    for (uint64_t j = 0; j < count; ++j) line.outcomes.push_back(static_cast<uint32_t>(get_varint(p)));
    out.push_back(std::move(line));
  }
  return out;
}

size_t LayoutTable::bytes() const {
  // A hash map node: its key, value and next pointer, plus its bucket.
  constexpr size_t kNode = 32;
  return sizeof(LayoutTable) + bytes_.capacity() + (at_.capacity() + next_.capacity()) * sizeof(uint32_t) +
         by_hash_.size() * kNode + by_hash_.bucket_count() * sizeof(void*) + lines_.capacity() * sizeof(LineKey) +
         line_ids_.size() * (kNode + sizeof(LineKey)) + line_ids_.bucket_count() * sizeof(void*);
}

}  // namespace oddsrelay::history
