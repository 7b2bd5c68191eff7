// Cutting a frame to a stream filter (stream_filter.h).
#include "relay/stream_filter.h"

#include <vector>

#include "relay/frame_encoder.h"

namespace oddsrelay::relay {

std::optional<LoopBatchFrame> narrow(const LoopBatchFrame& f, const StreamFilter& filter, uint64_t* encoded) {
  if (!filter.admits(f)) return std::nullopt;
  const bool cut = f.odds ? !filter.markets.empty() : !filter.events.empty();
  if (!cut) return f;
  std::vector<Part> keep;
  for (const Part& p : f.parts)
    if (filter.keeps(f, p)) keep.push_back(p);
  if (keep.empty()) return std::nullopt;
  if (keep.size() == f.parts.size()) return f;
  LoopBatchFrame out{FrameRef(), f.channel, f.sport, f.odds, {}, f.events};
  out.frame = pt_cut(f.frame, keep, &out.parts);
  for (uint32_t m : f.markets)
    if (filter.wants_market(m)) out.markets.push_back(m);
  if (encoded) ++*encoded;
  return out;
}

}  // namespace oddsrelay::relay
