#include "relay/resume_window.h"

#include <map>

#include "relay/heap_bytes.h"

namespace oddsrelay::relay {

const char* ResumeWindow::reason(Verdict v) {
  switch (v) {
    case Verdict::Resumed:
      return "";
    case Verdict::Malformed:
      return "malformed";
    case Verdict::OtherEpoch:
      return "other_epoch";
    case Verdict::TooOld:
      return "too_old";
    case Verdict::Ahead:
      return "ahead";
  }
  return "";
}

// Every heap block a held batch keeps alive, at its allocator size
// (heap_bytes.h): the batch's slot in the deque (libstdc++ allocates
// 512-byte nodes, or one element a node for larger ones, plus the node
// map's pointer, counted twice for the map's doubling), its vectors by
// capacity, the live events' ids, and each frame with its bytes and other
// framings. What only this loop holds counts once per loop; the hub's
// bytes once.
size_t ResumeWindow::cost(const LoopBatch& b) const {
  constexpr size_t kPerNode = sizeof(Held) < 512 ? 512 / sizeof(Held) : 1;
  FrameHeap h;
  h.own += (heap_block(kPerNode * sizeof(Held)) + 2 * sizeof(void*)) / kPerNode;
  h.own += heap_vector(b.frames) + heap_vector(b.live);
  for (const LiveChange& l : b.live) h.own += heap_string(l.key);
  if (b.marker) b.marker->add_heap(h);
  for (const LoopBatchFrame& f : b.frames) {
    f.frame->add_heap(h);
    h.own += heap_vector(f.markets) + heap_vector(f.parts);
  }
  return loops_ * h.own + h.shared;
}

void ResumeWindow::add(LoopBatch b, uint64_t now_ms) {
  if (!held_.empty() && b.from != held_.back().batch.seq + 1) clear();
  const size_t n = cost(b);
  bytes_ += n;
  held_.push_back(Held{std::move(b), n, now_ms});
  evict(now_ms);
  evict_bytes();
}

void ResumeWindow::recount(size_t first) {
  for (size_t i = first; i < held_.size(); ++i) {
    const size_t n = cost(held_[i].batch);
    bytes_ += n - held_[i].bytes;
    held_[i].bytes = n;
  }
  evict_bytes();
}

void ResumeWindow::evict_bytes() {
  while (bytes_ > max_bytes_ && !held_.empty()) pop_front();
}

void ResumeWindow::evict(uint64_t now_ms) {
  while (!held_.empty() && now_ms - held_.front().kept_at > max_age_ms_) pop_front();
}

void ResumeWindow::pop_front() {
  bytes_ -= held_.front().bytes;
  held_.pop_front();
}

ResumeWindow::Lookup ResumeWindow::find(std::string_view epoch, uint64_t seq, std::string_view cur_epoch,
                                        uint64_t cur_seq) const {
  if (epoch != cur_epoch) return {Verdict::OtherEpoch};
  if (seq > cur_seq) return {Verdict::Ahead};
  if (seq == cur_seq) return {Verdict::Resumed, held_.size()};
  // Every change after seq must be held: the oldest batch starts at or
  // before seq + 1, and the batches run up to cur_seq.
  if (held_.empty() || front().from > seq + 1 || held_.back().batch.seq != cur_seq) return {Verdict::TooOld};
  auto it =
      std::upper_bound(held_.begin(), held_.end(), seq, [](uint64_t s, const Held& h) { return s < h.batch.seq; });
  return {Verdict::Resumed, static_cast<size_t>(it - held_.begin())};
}

std::vector<std::pair<uint64_t, std::string_view>> ResumeWindow::live_changes(size_t first) const {
  std::map<uint64_t, std::string_view> m;
  for (size_t i = first; i < held_.size(); ++i)
    for (const LiveChange& l : held_[i].batch.live) m[l.number] = l.key;
  return {m.begin(), m.end()};
}

}  // namespace oddsrelay::relay
