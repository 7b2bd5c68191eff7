// Merging batches for a conflate_ms bucket (conflation.h).
#include "relay/conflation.h"

#include <algorithm>

#include "protocol/relay_frame.h"
#include "protocol/ws_frame.h"

namespace oddsrelay::relay {

void Conflation::add(const LoopBatch& batch, std::span<const LoopBatchFrame> frames) {
  if (empty()) from_ = batch.from;
  seq_ = batch.seq;
  at_ = std::max(at_, batch.at);
  stamps_ = batch.stamps;
  for (const LoopBatchFrame& f : frames) merge(f.odds ? odds_[f.channel] : evt_[f.sport], f);
}

void Conflation::merge(Channel& ch, const LoopBatchFrame& f) {
  const std::string_view whole = ws::frame_payload(f.frame->bytes());
  const size_t brace = whole.find(kSep, whole.find(kSep) + 1) + 1;
  if (ch.prefix.empty()) ch.prefix.assign(whole.substr(0, brace));
  ch.sport = f.sport;
  ch.classes = f.events;
  for (const Part& p : f.parts) ch.entries[p.id].assign(whole.substr(brace + p.off, p.len));
}

LoopBatchFrame Conflation::encode(const Channel& ch, uint64_t channel, bool odds) {
  FrameBuilder b;
  std::string& p = b.payload();
  p.append(ch.prefix);
  p += '{';
  LoopBatchFrame f{FrameRef(), channel, ch.sport, odds, {}, ch.classes};
  for (const auto& [id, entry] : ch.entries) {
    if (p.back() != '{') p += ',';
    f.parts.push_back(Part{id, static_cast<uint32_t>(p.size() - FrameBuilder::kRoom - ch.prefix.size()),
                           static_cast<uint32_t>(entry.size())});
    p.append(entry);
    if (odds) f.markets.push_back(static_cast<uint32_t>(id));
  }
  p += '}';
  f.frame = b.finish();
  return f;
}

LoopBatch Conflation::take(const std::function<bool(uint64_t)>& live) {
  LoopBatch out;
  out.from = from_;
  out.seq = seq_;
  out.at = at_;
  out.stamps = stamps_;
  for (const auto& [sport, ch] : evt_) out.frames.push_back(encode(ch, 0, false));
  for (const auto& [event, ch] : odds_)
    if (live(event)) out.frames.push_back(encode(ch, event, true));
  evt_.clear();
  odds_.clear();
  from_ = seq_ = 0;
  at_ = 0;
  stamps_ = Stamps{};
  return out;
}

}  // namespace oddsrelay::relay
