// The store-wide layouts (engine/history/layout_table.h).
#include "engine/history/layout_table.h"

#include <cstring>
#include <stdexcept>

namespace oddsrelay::history {

namespace {

// One word into the hash: a multiply and a shift (every bit of the word
// reaches the low bits the map's buckets use).
inline uint64_t mix(uint64_t h, uint64_t w) {
  h = (h ^ w) * 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 29);
}

uint64_t word(const LineKey& k, int i) {
  uint64_t w[2];
  std::memcpy(w, &k, sizeof w);
  return w[i];
}

// A record's line keys, each made once for the hash and the compare.
const LineKey* keys_of(const feed::MarketRec& rec) {
  thread_local std::vector<LineKey> keys;
  keys.clear();
  for (const feed::LineIn& in : rec.lines) keys.emplace_back(in.key);
  return keys.data();
}

}  // namespace

uint64_t LayoutTable::hash(const feed::MarketRec& rec, const LineKey* keys) const {
  // Of its ends and sizes only, not of every outcome: a market's ladder
  // moved by some rungs has other first and last keys, layouts of other
  // market types other ids, and what is filed under one hash all the same
  // is told apart by same(), which a record that finds its layout walks
  // anyway. (A hash of every key and id cost as much as that walk.)
  const LineKey& a = keys[0];
  const LineKey& b = keys[rec.lines.size() - 1];
  const uint64_t ids =
      rec.outcomes.empty() ? 0 : rec.outcomes.front().id | static_cast<uint64_t>(rec.outcomes.back().id) << 32;
  uint64_t h = mix(0xcbf29ce484222325ull, rec.lines.size() | static_cast<uint64_t>(rec.outcomes.size()) << 32);
  h = mix(mix(mix(mix(mix(h, word(a, 0)), word(a, 1)), word(b, 0)), word(b, 1)), ids);
  return (h ^ (h >> 32)) & hash_mask_;
}

bool LayoutTable::same(uint32_t id, const feed::MarketRec& rec) const { return same(id, rec, keys_of(rec)); }

bool LayoutTable::same(uint32_t id, const feed::MarketRec& rec, const LineKey* keys) const {
  const uint32_t* p = words_.data() + at_[id];
  const uint32_t* end = words_.data() + at_[id + 1];
  for (const feed::LineIn& in : rec.lines) {
    if (p == end || !(lines_[p[0]] == *keys++) || p[1] != in.count) return false;
    const feed::OutcomeIn* o = rec.outcomes.data() + in.first;
    for (uint32_t j = 0; j < in.count; ++j)
      if (p[2 + j] != o[j].id) return false;
    p += 2 + in.count;
  }
  return p == end;
}

uint32_t LayoutTable::find(const feed::MarketRec& rec, const LineKey* keys, uint64_t hash) const {
  auto it = by_hash_.find(hash);
  if (it == by_hash_.end()) return UINT32_MAX;
  for (uint32_t i = it->second; i != UINT32_MAX; i = next_[i])
    if (same(i, rec, keys)) return i;
  return UINT32_MAX;
}

uint32_t LayoutTable::intern(const feed::MarketRec& rec) {
  const LineKey* keys = keys_of(rec);
  const uint64_t h = hash(rec, keys);
  if (const uint32_t id = find(rec, keys, h); id != UINT32_MAX) return id;
  auto [it, added] = by_hash_.try_emplace(h, UINT32_MAX);
  if (at_.empty()) at_.push_back(0);
  size_t n = 0;
  for (const feed::LineIn& in : rec.lines) n += 2 + in.count;
  // Grown by a quarter, as the logs are: these bytes are counted too.
  if (words_.capacity() - words_.size() < n) words_.reserve(words_.size() + words_.size() / 4 + n);
  for (size_t i = 0; i < rec.lines.size(); ++i) {
    const feed::LineIn& in = rec.lines[i];
    words_.push_back(line_id(keys[i]));
    words_.push_back(in.count);
    for (uint32_t j = 0; j < in.count; ++j) words_.push_back(rec.outcomes[in.first + j].id);
  }
  at_.push_back(static_cast<uint32_t>(words_.size()));
  const auto id = static_cast<uint32_t>(next_.size());
  next_.push_back(it->second);
  it->second = id;
  return id;
}

void LayoutTable::line_ids(uint32_t id, std::vector<uint32_t>& out) const {
  out.clear();
  for (const uint32_t *p = words_.data() + at_[id], *end = words_.data() + at_[id + 1]; p < end; p += 2 + p[1])
    out.push_back(p[0]);
}

size_t LayoutTable::LineHash::operator()(const LineKey& k) const {
  uint64_t w[2];
  std::memcpy(w, &k, sizeof w);
  const uint64_t h = (w[0] ^ (w[1] * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
  return static_cast<size_t>(h ^ (h >> 32));
}

uint32_t LayoutTable::line_id(const LineKey& key) {
  if (auto it = line_ids_.find(key); it != line_ids_.end()) return it->second;
  if (lines_.size() >= max_lines_) throw std::length_error("odds history: more than 2^21 line keys");
  line_ids_.emplace(key, static_cast<uint32_t>(lines_.size()));
  lines_.push_back(key);
  return static_cast<uint32_t>(lines_.size() - 1);
}

MarketLayout LayoutTable::layout(uint32_t id) const {
  MarketLayout out;
  for (const uint32_t *p = words_.data() + at_[id], *end = words_.data() + at_[id + 1]; p < end; p += 2 + p[1])
    out.push_back(LineLayout{lines_[p[0]], std::vector<uint32_t>(p + 2, p + 2 + p[1])});
  return out;
}

size_t LayoutTable::bytes() const {
  // A hash map node: its key, value and next pointer, plus its bucket.
  constexpr size_t kNode = 32;
  return sizeof(LayoutTable) + (words_.capacity() + at_.capacity() + next_.capacity()) * sizeof(uint32_t) +
         by_hash_.size() * kNode + by_hash_.bucket_count() * sizeof(void*) + lines_.capacity() * sizeof(LineKey) +
         line_ids_.size() * (kNode + sizeof(LineKey)) + line_ids_.bucket_count() * sizeof(void*);
}

}  // namespace oddsrelay::history
