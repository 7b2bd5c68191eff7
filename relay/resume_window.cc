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

void ResumeWindow::add(Group g, uint64_t now_ms) {
  if (!groups_.empty() && g.from != groups_.back().seq + 1) {
    groups_.clear();
    bytes_ = 0;
  }
  size_t b = sizeof(Group) + (g.marker ? g.marker->size() : 0);
  for (const GroupFrame& f : g.frames) b += sizeof(GroupFrame) + f.frame->size() + 4 * f.markets.size();
  for (const LiveChange& l : g.live) b += sizeof(LiveChange) + (l.key.size() > 15 ? l.key.size() : 0);
  g.bytes = b;
  g.kept_at = now_ms;
  bytes_ += b;
  groups_.push_back(std::move(g));
  evict(now_ms);
  while (bytes_ > max_bytes_ && !groups_.empty()) pop_front();
}

void ResumeWindow::evict(uint64_t now_ms) {
  while (!groups_.empty() && now_ms - groups_.front().kept_at > max_age_ms_) pop_front();
}

void ResumeWindow::pop_front() {
  bytes_ -= groups_.front().bytes;
  groups_.pop_front();
}

ResumeWindow::Lookup ResumeWindow::find(std::string_view epoch, uint64_t seq, std::string_view cur_epoch,
                                        uint64_t cur_seq) const {
  if (epoch != cur_epoch) return {Verdict::OtherEpoch};
  if (seq > cur_seq) return {Verdict::Ahead};
  if (seq == cur_seq) return {Verdict::Resumed, groups_.size()};
  // Every change after seq must be held: the oldest group starts at or
  // before seq + 1, and the groups run up to cur_seq.
  if (groups_.empty() || groups_.front().from > seq + 1 || groups_.back().seq != cur_seq) return {Verdict::TooOld};
  auto it = std::upper_bound(groups_.begin(), groups_.end(), seq, [](uint64_t s, const Group& g) { return s < g.seq; });
  return {Verdict::Resumed, static_cast<size_t>(it - groups_.begin())};
}

std::vector<std::pair<uint64_t, std::string_view>> ResumeWindow::live_changes(size_t first) const {
  std::map<uint64_t, std::string_view> m;
  for (size_t i = first; i < groups_.size(); ++i)
    for (const LiveChange& l : groups_[i].live) m[l.number] = l.key;
  return {m.begin(), m.end()};
}

}  // namespace oddsrelay::relay
