// The hub (hub.h): one batch in, one shared Turn out.
#include "relay/hub.h"

#include <time.h>

#include <algorithm>

#include "relay/relay_server.h"
#include "relay/stream_conn.h"

namespace oddsrelay::relay {

int64_t wall_us() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1000;
}

void append_event_frames(const std::vector<std::pair<int32_t, EventItem>>& events, uint8_t classes,
                         std::vector<GroupFrame>& out) {
  std::vector<EventItem> items;
  for (size_t i = 0; i < events.size();) {
    const int32_t sport = events[i].first;
    items.clear();
    for (; i < events.size() && events[i].first == sport; ++i) items.push_back(events[i].second);
    GroupFrame f{FrameRef(), 0, sport, false, {}, classes};
    f.frame = pt_events(sport, items, &f.parts);
    out.push_back(std::move(f));
  }
}

Group local_group(const Turn& t) {
  Group g;
  g.from = t.from;
  g.seq = t.seq;
  g.at = t.at;
  g.applied_us = t.stamps.applied_us;
  g.encoded_us = t.stamps.encoded_us;
  g.marker = FrameRef::local(t.marker);
  g.frames.reserve(t.frames.size());
  for (const HubFrame& f : t.frames)
    g.frames.push_back(GroupFrame{FrameRef::local(f.frame), f.channel, f.sport, f.odds, f.markets, f.events, f.parts});
  g.live = t.live;
  return g;
}

Group local_group(std::span<const TurnPtr> turns) {
  if (turns.size() == 1) return local_group(*turns.front());
  Group g;
  const Turn& last = *turns.back();
  g.from = turns.front()->from;
  g.seq = last.seq;
  g.applied_us = last.stamps.applied_us;
  g.encoded_us = last.stamps.encoded_us;
  size_t n = 0;
  for (const TurnPtr& t : turns) n += t->frames.size();
  g.frames.reserve(n);
  for (const TurnPtr& t : turns) {
    g.at = std::max(g.at, t->at);
    for (const HubFrame& f : t->frames)
      g.frames.push_back(
          GroupFrame{FrameRef::local(f.frame), f.channel, f.sport, f.odds, f.markets, f.events, f.parts});
    g.live.insert(g.live.end(), t->live.begin(), t->live.end());
  }
  g.marker = pt_marker(g.seq, g.from, g.at, 0, Stamps{g.applied_us, g.encoded_us});
  return g;
}

TurnPtr Hub::encode(const BatchPtr& batch) {
  const Batch& b = *batch;
  if (b.reset) {
    auto t = std::make_shared<Turn>();
    t->reset = true;
    t->batch = batch;
    t->seq = b.snapshot->seq;
    t->prev = std::exchange(snap_, b.snapshot);
    return t;
  }
  if (b.snapshot->seq <= snap_->seq) return nullptr;
  auto t = std::make_shared<Turn>();
  t->prev = std::move(snap_);
  snap_ = b.snapshot;
  const Snapshot& cur = *snap_;
  const Snapshot& prev = *t->prev;
  t->batch = batch;
  t->from = b.first_seq;
  t->seq = cur.seq;
  for (const auto& r : b.records) t->at = std::max(t->at, r.at);
  t->stamps.applied_us = b.sealed_us;
  stats_.batches.fetch_add(1, std::memory_order_relaxed);

  std::vector<GroupFrame> out;
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
      GroupFrame o{FrameRef(), ch.number, now->sport(), true, {markets.begin(), markets.end()}};
      o.frame = pt_odds(*now, now->sport(), markets, &o.parts);
      if (!was_live)
        for (const MarketRef& m : now->markets) o.markets.push_back(m.id);
      out.push_back(std::move(o));
    }
    if ((live || was_live) &&
        (ch.bits & (kEventAdded | kEventChanged | kEventRemoved | kScoreChanged | kOddsChanged))) {
      t->live.push_back(LiveChange{ch.number, listed       ? now->key
                                              : was_listed ? before->key
                                                           : std::to_string(ch.number)});
    }
  }
  for (uint8_t classes = 1; classes < 4; ++classes) {
    std::stable_sort(evt[classes].begin(), evt[classes].end(), [](auto& a, auto& b) { return a.first < b.first; });
    append_event_frames(evt[classes], classes, out);
  }
  // Event lists first, then odds: a client learns of an event before its prices.
  std::stable_partition(out.begin(), out.end(), [](const GroupFrame& o) { return !o.odds; });
  t->frames.reserve(out.size());
  for (GroupFrame& o : out)
    t->frames.push_back(HubFrame{std::move(o.frame).share(), o.channel, o.sport, o.odds, std::move(o.markets), o.events,
                                 std::move(o.parts)});
  t->stamps.encoded_us = wall_us();
  t->marker = pt_marker(t->seq, t->from, t->at, 0, t->stamps).share();
  stats_.frames_encoded.fetch_add(t->frames.size() + 1, std::memory_order_relaxed);
  return t;
}

}  // namespace oddsrelay::relay
