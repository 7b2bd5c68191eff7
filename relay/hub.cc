// The hub (hub.h): one engine batch in, one SharedBatch out.
#include "relay/hub.h"

#include <time.h>

#include <algorithm>

#include "relay/relay_stats.h"
#include "relay/stream_conn.h"

namespace oddsrelay::relay {

int64_t wall_us() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1000;
}

void append_event_frames(const std::vector<std::pair<int32_t, EventItem>>& events, uint8_t classes,
                         std::vector<LoopBatchFrame>& out) {
  std::vector<EventItem> items;
  for (size_t i = 0; i < events.size();) {
    const int32_t sport = events[i].first;
    items.clear();
    for (; i < events.size() && events[i].first == sport; ++i) items.push_back(events[i].second);
    LoopBatchFrame f{FrameRef(), 0, sport, false, {}, classes};
    f.frame = pt_events(sport, items, &f.parts);
    out.push_back(std::move(f));
  }
}

namespace {

LoopBatchFrame local_frame(const SharedBatchFrame& f) {
  return LoopBatchFrame{FrameRef::local(f.frame), f.channel, f.sport, f.odds, f.markets, f.events, f.parts};
}

}  // namespace

LoopBatch local_batch(const SharedBatch& b) {
  LoopBatch l;
  l.from = b.from;
  l.seq = b.seq;
  l.at = b.at;
  l.stamps = b.stamps;
  l.marker = FrameRef::local(b.marker);
  l.frames.reserve(b.frames.size());
  for (const SharedBatchFrame& f : b.frames) l.frames.push_back(local_frame(f));
  l.live = b.live;
  return l;
}

LoopBatch local_batch(std::span<const SharedBatchPtr> batches) {
  if (batches.size() == 1) return local_batch(*batches.front());
  LoopBatch l;
  const SharedBatch& last = *batches.back();
  l.from = batches.front()->from;
  l.seq = last.seq;
  l.stamps = last.stamps;
  size_t n = 0;
  for (const SharedBatchPtr& b : batches) n += b->frames.size();
  l.frames.reserve(n);
  for (const SharedBatchPtr& b : batches) {
    l.at = std::max(l.at, b->at);
    for (const SharedBatchFrame& f : b->frames) l.frames.push_back(local_frame(f));
    l.live.insert(l.live.end(), b->live.begin(), b->live.end());
  }
  l.marker = pt_marker(l.seq, l.from, l.at, 0, l.stamps);
  return l;
}

SharedBatchPtr Hub::encode(const BatchPtr& batch) {
  const Batch& b = *batch;
  if (b.reset) {
    auto sb = std::make_shared<SharedBatch>();
    sb->reset = true;
    sb->batch = batch;
    sb->seq = b.snapshot->seq;
    sb->prev = std::exchange(snap_, b.snapshot);
    return sb;
  }
  if (b.snapshot->seq <= snap_->seq) return nullptr;
  auto sb = std::make_shared<SharedBatch>();
  sb->prev = std::move(snap_);
  snap_ = b.snapshot;
  const Snapshot& cur = *snap_;
  const Snapshot& prev = *sb->prev;
  sb->batch = batch;
  sb->from = b.first_seq;
  sb->seq = cur.seq;
  sb->at = b.newest_at;
  sb->stamps.arrived_us = b.arrived_us;
  sb->stamps.applied_us = b.sealed_us;
  stats_.batches.fetch_add(1, std::memory_order_relaxed);

  std::vector<LoopBatchFrame> out;
  // (sport, event) deltas per classes of events a stream may see: a stream
  // sees an event while it is of a class it may see, and a null when it
  // leaves that class (removed, or a pre-match event kicking off).
  std::vector<std::pair<int32_t, EventItem>> evt[4];
  for (const EventChange& ch : b.changes) {
    const EventEntry* now = cur.events.find(ch.number);
    const EventEntry* before = prev.events.find(ch.number);
    const bool listed = now && now->listed(), was_listed = before && before->listed();
    const bool live = now && now->live(), was_live = before && before->live();
    if (ch.bits & (kEventAdded | kEventChanged | kEventRemoved)) {
      // Every class, whoever is connected now: the resume window keeps
      // these frames for streams that come back later.
      for (uint8_t classes = 1; classes < 4; ++classes) {
        auto sees = [&](bool is_live) { return (classes & (is_live ? kLiveEvents : kPrematchEvents)) != 0; };
        if (listed && sees(live))
          evt[classes].push_back({now->sport(), EventItem{now->key, now}});
        else if (was_listed && sees(was_live))
          evt[classes].push_back({before->sport(), EventItem{before->key, nullptr, before->number}});
      }
    }
    if (live && (!was_live || (ch.bits & kOddsChanged))) {
      // An event that just went live gets its whole odds; afterwards only
      // the markets that changed, each whole.
      auto markets = was_live ? b.markets_of(ch) : std::span<const uint32_t>{};
      LoopBatchFrame o{FrameRef(), ch.number, now->sport(), true, {markets.begin(), markets.end()}};
      o.frame = pt_odds(*now, now->sport(), markets, &o.parts);
      if (!was_live)
        for (const MarketRef& m : now->markets) o.markets.push_back(m.id);
      out.push_back(std::move(o));
    }
    if ((live || was_live) &&
        (ch.bits & (kEventAdded | kEventChanged | kEventRemoved | kScoreChanged | kOddsChanged))) {
      sb->live.push_back(LiveChange{ch.number, listed       ? now->key
                                               : was_listed ? before->key
                                                            : std::to_string(ch.number)});
    }
  }
  for (uint8_t classes = 1; classes < 4; ++classes) {
    std::stable_sort(evt[classes].begin(), evt[classes].end(), [](auto& a, auto& b) { return a.first < b.first; });
    append_event_frames(evt[classes], classes, out);
  }
  // Event lists first, then odds: a client learns of an event before its prices.
  std::stable_partition(out.begin(), out.end(), [](const LoopBatchFrame& o) { return !o.odds; });
  sb->frames.reserve(out.size());
  for (LoopBatchFrame& o : out)
    sb->frames.push_back(SharedBatchFrame{std::move(o.frame).share(), o.channel, o.sport, o.odds, std::move(o.markets),
                                          o.events, std::move(o.parts)});
  sb->stamps.encoded_us = wall_us();
  sb->marker = pt_marker(sb->seq, sb->from, sb->at, 0, sb->stamps).share();
  stats_.frames_encoded.fetch_add(sb->frames.size() + 1, std::memory_order_relaxed);
  return sb;
}

}  // namespace oddsrelay::relay
