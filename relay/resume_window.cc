#include "relay/resume_window.h"

#include <map>

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

void ResumeWindow::add(LoopBatch b, uint64_t now_ms) {
  if (!held_.empty() && b.from != held_.back().batch.seq + 1) clear();
  size_t n = sizeof(Held) + (b.marker ? b.marker->size() : 0);
  for (const LoopBatchFrame& f : b.frames) n += sizeof(LoopBatchFrame) + f.frame->size() + 4 * f.markets.size();
  for (const LiveChange& l : b.live) n += sizeof(LiveChange) + (l.key.size() > 15 ? l.key.size() : 0);
  bytes_ += n;
  held_.push_back(Held{std::move(b), n, now_ms});
  evict(now_ms);
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
