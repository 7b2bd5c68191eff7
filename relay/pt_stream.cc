// /pt-ws fan-out, snapshots and catch-up (pt_stream.h).
#include "relay/pt_stream.h"

#include <algorithm>
#include <iterator>

#include "relay/hub.h"
#include "relay/view_digest.h"

namespace oddsrelay::relay {

namespace {

constexpr uint64_t kMarkerChannel = UINT64_MAX;  // no event has this number

uint32_t channel_mask(const StreamFilter& f) { return (f.evt ? 1u : 0u) | (f.odds ? 2u : 0u); }

}  // namespace

void PtStreams::add(StreamConn* c) {
  const StreamFilter f = c->filter();
  size_t i = 0;
  const uint32_t ms = c->ticket.conflate_ms;
  const bool verify = c->ticket.verify;
  while (i < buckets_.size() && !buckets_[i].same(f, ms, verify)) ++i;
  if (i == buckets_.size()) {
    // Reuse an empty bucket before growing: distinct filters come and go.
    i = 0;
    while (i < buckets_.size() && !buckets_[i].conns.empty()) ++i;
    if (i == buckets_.size()) buckets_.emplace_back();
    Bucket& b = buckets_[i];
    b.sports.assign(f.sports.begin(), f.sports.end());
    b.events.assign(f.events.begin(), f.events.end());
    b.markets.assign(f.markets.begin(), f.markets.end());
    b.connect_gen = 0;
    b.conflate_ms = ms;
    b.verify = verify;
    b.forget_held();
    b.connect.clear();
    b.classes = f.classes;
    b.odds = f.odds;
  }
  c->bucket = static_cast<uint32_t>(i);
  list_add(buckets_[i].conns, c, &StreamConn::fan_slot);
  ++size_;
  ctx_.stats.pt_connections.fetch_add(1, std::memory_order_relaxed);
}

void PtStreams::remove(StreamConn* c) {
  if (!c->listed()) return;
  ctx_.stats.pt_connections.fetch_sub(1, std::memory_order_relaxed);
  Bucket& b = buckets_[c->bucket];
  list_remove(b.conns, c, &StreamConn::fan_slot);
  if (b.conns.empty()) b.forget_held();
  --size_;
}

// The frames of a batch, then one INFO that closes them: {"seq": last
// record, "from": first record, "at": newest record, stamps}. The INFO is
// conflatable too, so a client that lags holds one, not one per batch.
void PtStreams::fan_out(const LoopBatch& batch) {
  for (Bucket& b : buckets_)
    if (!b.conns.empty()) send_admitted(b, batch);
}

// One bucket's share of a batch: the frames its filter admits (cut once
// for the bucket when it names events or markets), to each of its streams,
// or held for the bucket's next flush when it conflates.
void PtStreams::send_admitted(Bucket& b, const LoopBatch& batch) {
  const StreamFilter f = b.filter();
  std::span<const LoopBatchFrame> frames;
  if (f.cuts() || b.conflate_ms) {
    uint64_t encoded = 0;
    cut_.clear();
    for (const LoopBatchFrame& o : batch.frames)
      if (auto cut = narrow(o, f, &encoded)) cut_.push_back(std::move(*cut));
    ctx_.stats.frames_encoded.fetch_add(encoded, std::memory_order_relaxed);
    frames = cut_;
  }
  if (b.conflate_ms) {
    b.pending.add(batch, frames);
    if (ctx_.now >= b.next_flush) return flush(b);  // quiet until now: at once
    return schedule();
  }
  if (f.cuts()) return send_frames(b, batch, frames);
  admitted_.clear();
  for (size_t i = 0; i < batch.frames.size(); ++i)
    if (f.admits(batch.frames[i])) admitted_.push_back(static_cast<uint32_t>(i));
  const std::optional<uint64_t> from = open_group(b, batch, !admitted_.empty());
  if (!from) return;
  const std::optional<uint64_t> digest = digest_of(b);
  const FrameRef marker = group_marker(batch, *from, digest);
  for (StreamConn* c : b.conns) {
    for (uint32_t i : admitted_) send_batch_frame(c, batch.frames[i]);
    close_group(c, batch, *from, marker, digest);
  }
  ctx_.stats.deliveries.fetch_add(admitted_.size() * b.conns.size(), std::memory_order_relaxed);
}

void PtStreams::send_frames(Bucket& b, const LoopBatch& batch, std::span<const LoopBatchFrame> frames) {
  const std::optional<uint64_t> from = open_group(b, batch, !frames.empty());
  if (!from) return;
  const std::optional<uint64_t> digest = digest_of(b);
  const FrameRef marker = group_marker(batch, *from, digest);
  for (StreamConn* c : b.conns) {
    for (const LoopBatchFrame& o : frames) send_batch_frame(c, o);
    close_group(c, batch, *from, marker, digest);
  }
  ctx_.stats.deliveries.fetch_add(frames.size() * b.conns.size(), std::memory_order_relaxed);
}

// Quiet groups (docs/api.md, "Filters"): a group that brings a bucket no
// frame costs each of its streams a write of a lone INFO, and with
// filters that is most groups (50 distinct filters made 3.4x the writes
// per delivered frame of unfiltered streams). Such a group goes out at once
// only when the bucket's last INFO is kQuietInfoMs old; otherwise its range
// waits for the bucket's next INFO: the next group with frames for it, or
// the timer at most kQuietInfoMs after the last INFO. A frame is never held:
// only an INFO with nothing before it is. Returns the `from` the group's
// INFO carries (the first waiting group's), or nothing when it waits.
std::optional<uint64_t> PtStreams::open_group(Bucket& b, const LoopBatch& batch, bool has_frames) {
  if (!has_frames && b.last_info_ms != kNever && ctx_.now < b.last_info_ms + kQuietInfoMs) {
    const bool first = !b.quiet.seq;
    if (first) b.quiet.from = batch.from;
    b.quiet.seq = batch.seq;
    b.quiet.at = batch.at;
    b.quiet.stamps = batch.stamps;
    // The INFO is due at last_info_ms + kQuietInfoMs whatever follows, so
    // the timer is armed once per quiet run, not per group and bucket.
    if (first) schedule();
    return std::nullopt;
  }
  const uint64_t from = b.quiet.seq ? b.quiet.from : batch.from;
  b.quiet.seq = 0;
  b.last_info_ms = ctx_.now;
  return from;
}

// The INFO a bucket's streams share for a group from `from`: the hub's own
// when it is that (no digest, nothing waited), else one made for the bucket.
FrameRef PtStreams::group_marker(const LoopBatch& batch, uint64_t from, std::optional<uint64_t> digest) {
  if (!digest && from == batch.from) return batch.marker;
  return pt_marker(batch.seq, from, batch.at, 0, batch.stamps, digest);
}

// A stream's INFO for a group: the bucket's, unless the stream joined
// after the bucket's first waiting group (its snapshot or catch-up reached
// further): then its own from there.
void PtStreams::close_group(StreamConn* c, const LoopBatch& batch, uint64_t from, const FrameRef& marker,
                            std::optional<uint64_t> digest) {
  const uint64_t own = std::max(from, c->sent_seq + 1);
  send_marker(c, batch, own, own == from ? marker : FrameRef(), digest);
  c->sent_seq = batch.seq;
}

// The timer: a bucket's waiting groups whose INFO is due.
void PtStreams::flush_quiet(Bucket& b) {
  LoopBatch q;
  std::swap(q.from, b.quiet.from);
  std::swap(q.seq, b.quiet.seq);
  q.at = b.quiet.at;
  q.stamps = b.quiet.stamps;
  b.last_info_ms = ctx_.now;
  const std::optional<uint64_t> digest = digest_of(b);
  const FrameRef marker = pt_marker(q.seq, q.from, q.at, 0, q.stamps, digest);
  for (StreamConn* c : b.conns)
    if (c->sent_seq < q.seq) close_group(c, q, q.from, marker, digest);
}

// A conflating bucket's merged frames, encoded once, to each of its
// streams, with one INFO each from where that stream stood: a stream that
// connected since the last flush has seen the state up to its snapshot.
void PtStreams::flush(Bucket& b) {
  b.next_flush = ctx_.now + b.conflate_ms;
  if (b.pending.empty()) return;
  const Snapshot& s = *ctx_.snap;
  LoopBatch merged = b.pending.take([&](uint64_t n) {
    const EventEntry* e = s.events.find(n);
    return e && e->listed() && e->live();
  });
  ctx_.stats.frames_encoded.fetch_add(merged.frames.size() + 1, std::memory_order_relaxed);
  const std::optional<uint64_t> digest = digest_of(b);
  merged.marker = pt_marker(merged.seq, merged.from, merged.at, 0, merged.stamps, digest);
  uint64_t delivered = 0;
  for (StreamConn* c : b.conns) {
    if (c->sent_seq >= merged.seq) continue;
    for (const LoopBatchFrame& o : merged.frames) send_batch_frame(c, o);
    const uint64_t from = std::max(merged.from, c->sent_seq + 1);
    send_marker(c, merged, from, from == merged.from ? merged.marker : FrameRef(), digest);
    c->sent_seq = merged.seq;
    delivered += merged.frames.size();
  }
  ctx_.stats.deliveries.fetch_add(delivered, std::memory_order_relaxed);
}

std::optional<uint64_t> PtStreams::digest_of(const Bucket& b) const {
  if (!b.verify) return std::nullopt;
  return view_digest(*ctx_.snap, b.filter());
}

void PtStreams::on_timer() {
  for (Bucket& b : buckets_) {
    if (b.conflate_ms && !b.pending.empty() && ctx_.now >= b.next_flush) flush(b);
    if (b.quiet.seq && ctx_.now >= b.last_info_ms + kQuietInfoMs) flush_quiet(b);
  }
  schedule();
}

// Arms the timer for the earliest pending flush (none pending: not armed).
void PtStreams::schedule() {
  uint64_t due = UINT64_MAX;
  for (const Bucket& b : buckets_) {
    if (b.conflate_ms && !b.pending.empty()) due = std::min(due, b.next_flush);
    if (b.quiet.seq) due = std::min(due, b.last_info_ms + kQuietInfoMs);
  }
  if (due == UINT64_MAX || !arm_timer) return;
  arm_timer(due > ctx_.now ? due - ctx_.now : 0);
}

// Queues a frame of a batch. While a write to the client is in flight, a
// newer odds frame of an event replaces the queued one (SendQueue); when the
// queued one names markets the newer does not, the replacement is this
// connection's own frame naming both sets, encoded from the current state:
// a lagging client skips intermediate prices, never a market's last change.
void PtStreams::send_batch_frame(StreamConn* c, const LoopBatchFrame& o) {
  Outbox& out = ctx_.out;
  if (!o.odds || !c->q.in_flight()) return out.send(c, o.frame, o.channel);
  auto& known = c->queued_markets;  // what each replaceable queued odds frame names
  if (!c->q.will_replace(o.channel)) {
    known[o.channel] = o.markets;
    return out.send(c, o.frame, o.channel);
  }
  std::vector<uint32_t>& have = known[o.channel];
  if (std::includes(o.markets.begin(), o.markets.end(), have.begin(), have.end())) {
    have = o.markets;
    return out.send(c, o.frame, o.channel);
  }
  const EventEntry* e = ctx_.snap->events.find(o.channel);
  if (!e) return out.send(c, o.frame, 0);  // the event is gone (its null follows): keep both
  std::vector<uint32_t> both;
  std::set_union(have.begin(), have.end(), o.markets.begin(), o.markets.end(), std::back_inserter(both));
  ctx_.stats.frames_encoded.fetch_add(1, std::memory_order_relaxed);
  out.send(c, pt_odds(*e, o.sport, both), o.channel);
  have = std::move(both);
}

// The INFO closing a batch on one connection: `shared` (may be empty) if
// it fits, else the connection's own. A lagging connection's INFO counts the
// frames conflation replaced and, when it replaces a queued INFO, covers
// that INFO's records too, so the INFOs a client reads keep from = previous
// seq + 1.
void PtStreams::send_marker(StreamConn* c, const LoopBatch& batch, uint64_t from, const FrameRef& shared,
                            std::optional<uint64_t> digest) {
  const bool replaces = c->q.will_replace(kMarkerChannel);
  // Frames replaced since the last INFO, this INFO's replacement included.
  const uint64_t fresh = c->q.take_conflated() + (replaces ? 1 : 0);
  ctx_.stats.conflated.fetch_add(fresh, std::memory_order_relaxed);
  // A replaced INFO hands on its range and its count.
  const uint64_t f = replaces ? c->queued_info_from : from;
  const uint64_t k = fresh + (replaces ? c->queued_info_conflated : 0);
  c->queued_info_from = f;
  c->queued_info_conflated = k;
  if (k == 0 && shared)
    ctx_.out.send(c, shared, kMarkerChannel);
  else
    ctx_.out.send(c, pt_marker(batch.seq, f, batch.at, k, batch.stamps, digest), kMarkerChannel);
  if (replaces) c->q.take_conflated();  // the replacement, counted above
}

void PtStreams::refresh_connect_cache() {
  const Snapshot& s = *ctx_.snap;
  if (cache_seq_ == s.seq) return;
  cache_seq_ = s.seq;
  ++connect_gen_;
  for (auto& v : connect_evt_) v.clear();
  connect_evt_built_ = 0;
  connect_odds_.clear();
  // The odds of every live event; the event lists are built per classes
  // of events when a stream that sees them connects.
  std::vector<std::shared_ptr<const EventEntry>> live;
  s.events.for_each([&](const EventEntry& e) {
    if (e.listed() && e.live()) live.push_back(s.events.find_shared(e.number));
  });
  std::sort(live.begin(), live.end(), [](auto& a, auto& b) { return a->number < b->number; });
  if (full_odds_.size() > 4 * live.size() + 1024) full_odds_.clear();  // drop events long gone
  for (const auto& e : live) {
    FullOdds& f = full_odds_[e->number];
    if (f.version != e) {  // encoded once per version of the event
      f.version = e;
      f.parts.clear();
      f.frame = pt_odds(*e, e->sport(), {}, &f.parts);
    }
    connect_odds_.push_back(LoopBatchFrame{f.frame, e->number, e->sport(), true, {}, 0, f.parts});
  }
}

void PtStreams::start(StreamConn* c, ResumeWindow::Verdict v, size_t first) {
  if (v == ResumeWindow::Verdict::Resumed && c->ticket.resume == api::StreamTicket::Resume::Asked)
    return catch_up(c, first, c->ticket.resume_seq);
  send_connect_snapshot(c, v);
}

// The ready INFO: the sports with listed events that pass the filter, the
// channels the key allows.
FrameRef PtStreams::ready_info(const StreamFilter& filter, ResumeNote note, SnapshotNote snapshot) {
  std::vector<int32_t> sports;
  for (const SportCount& s : ctx_.snap->sports)
    if (filter.wants_sport(s.sport)) sports.push_back(s.sport);
  return pt_ready(*ctx_.snap, sports, channel_mask(filter), note, snapshot);
}

void PtStreams::build_connect_evt(uint8_t classes) {
  if (!classes || (connect_evt_built_ & (1u << classes))) return;
  connect_evt_built_ |= static_cast<uint8_t>(1u << classes);
  std::vector<std::pair<int32_t, EventItem>> evt;  // every listed event of those classes, per sport
  ctx_.snap->events.for_each([&](const EventEntry& e) {
    if (e.listed() && (classes & (e.live() ? kLiveEvents : kPrematchEvents)))
      evt.push_back({e.sport(), EventItem{e.key, &e}});
  });
  std::sort(evt.begin(), evt.end(), [](auto& a, auto& b) {
    return std::pair(a.first, a.second.entry->number) < std::pair(b.first, b.second.entry->number);
  });
  append_event_frames(evt, classes, connect_evt_[classes]);
}

// A cutting bucket's connect snapshot: cut once per state for all its
// streams.
const std::vector<LoopBatchFrame>& PtStreams::cut_connect_frames(Bucket& b) {
  if (b.connect_gen == connect_gen_) return b.connect;
  b.connect_gen = connect_gen_;
  b.connect.clear();
  const StreamFilter f = b.filter();
  uint64_t encoded = 0;
  for (const auto* frames : {&connect_evt_[b.classes], &connect_odds_})
    for (const LoopBatchFrame& o : *frames)
      if (auto cut = narrow(o, f, &encoded)) b.connect.push_back(std::move(*cut));
  ctx_.stats.frames_encoded.fetch_add(encoded, std::memory_order_relaxed);
  return b.connect;
}

// `refused`: why a resume was refused, or Resumed when none was asked for.
// The ready INFO counts the snapshot's frames (and carries the view's
// digest with verify=1), so a client closes the snapshot at its last frame.
void PtStreams::send_connect_snapshot(StreamConn* c, ResumeWindow::Verdict refused) {
  const ResumeNote note{refused != ResumeWindow::Verdict::Resumed, false, ResumeWindow::reason(refused)};
  refresh_connect_cache();
  const uint8_t classes = stream_event_classes(c);
  build_connect_evt(classes);
  const StreamFilter filter = c->filter();
  Bucket& b = buckets_[c->bucket];
  snapshot_.clear();
  if (filter.cuts()) {
    for (const LoopBatchFrame& o : cut_connect_frames(b)) snapshot_.push_back(&o);
  } else {
    for (const auto* frames : {&connect_evt_[classes], &connect_odds_})
      for (const LoopBatchFrame& o : *frames)
        if (filter.admits(o)) snapshot_.push_back(&o);
  }
  c->sent_seq = ctx_.snap->seq;
  ctx_.out.send_exempt(c, ready_info(filter, note, SnapshotNote{snapshot_.size(), digest_of(b)}));
  for (const LoopBatchFrame* o : snapshot_) ctx_.out.send_exempt(c, o->frame, o->channel);
}

// Resumed: the ready INFO, then the window's batches after `seq` in order,
// filtered as live fan-out filters them, through the bounded send queue.
// Once the socket stops taking bytes a write stays in flight and the rest
// conflates as for any lagging client.
void PtStreams::catch_up(StreamConn* c, size_t first, uint64_t seq) {
  constexpr size_t kFlushEvery = 256 << 10;
  const StreamFilter filter = c->filter();
  const ResumeWindow& w = ctx_.window;
  ctx_.out.send_exempt(c, ready_info(filter, ResumeNote{true, true, {}}));
  c->sent_seq = seq;
  uint64_t delivered = 0;
  uint64_t quiet_from = 0;  // the first of the quiet groups whose INFO waits (0: none)
  for (size_t i = first; i < w.size() && c->open(); ++i) {
    const LoopBatch& batch = w[i];
    size_t sent = 0;
    for (const LoopBatchFrame& o : batch.frames) {
      // Cut per resuming stream, not per bucket: a catch-up is rare next
      // to live batches.
      auto cut = narrow(o, filter);
      if (!cut) continue;
      send_batch_frame(c, *cut);
      ++sent;
    }
    delivered += sent;
    // seq inside this batch: the whole batch again (frames replace whole
    // objects, so applying them twice is harmless), its INFO from seq + 1.
    const uint64_t from = quiet_from ? quiet_from : std::max(batch.from, seq + 1);
    // A quiet group (no frame for this stream) sends no INFO of its own, as
    // live (open_group): its range rides on the next INFO; the last group
    // always closes the catch-up at the current seq.
    if (sent == 0 && i + 1 < w.size()) {
      quiet_from = from;
      continue;
    }
    quiet_from = 0;
    // Only the catch-up's last INFO is at the current state, the one whose
    // digest can be had: a verify=1 stream gets it there (the window keeps
    // no digests of the groups before).
    std::optional<uint64_t> digest;
    if (c->ticket.verify && i + 1 == w.size() && batch.seq == ctx_.snap->seq) digest = view_digest(*ctx_.snap, filter);
    send_marker(c, batch, from, from == batch.from && !digest ? batch.marker : FrameRef(), digest);
    c->sent_seq = batch.seq;
    if (ctx_.flush_now && !c->q.in_flight() && c->q.bytes() >= kFlushEvery) ctx_.flush_now(c);
  }
  ctx_.stats.deliveries.fetch_add(delivered, std::memory_order_relaxed);
  // The framings made for this stream (SSE, deflate) stay cached on the
  // window's frames: the window counts them from now on.
  ctx_.window.recount(first);
  ctx_.publish_window_stats();
}

}  // namespace oddsrelay::relay
