// Fan-out of the relay loop (see relay_loop.h): each engine batch becomes a
// handful of frames, encoded once, queued to every subscriber whose
// permissions and sports filter admit them; connect snapshots; /ws live
// updates at most once per interval; /ws market subscriptions.
#include <algorithm>
#include <charconv>
#include <iterator>

#include <rapidjson/document.h>

#include "engine/metrics/data_path.h"
#include "protocol/event_id.h"
#include "relay/frame_encoder.h"
#include "relay/relay_loop.h"
#include "rest/access.h"
#include "rest/api_keys.h"
#include "rest/errors.h"

namespace oddsrelay::relay {

namespace {

constexpr size_t kMaxSubscriptions = 100;  // events per /ws connection
constexpr size_t kMaxSubscribedMarkets = 200;
constexpr uint64_t kMarkerChannel = UINT64_MAX;  // no event has this number

bool may_odds(const StreamConn* c) { return c->ticket.permissions & rest::permission_for(rest::Data::Price); }

uint32_t channel_mask(const StreamFilter& f) { return (f.evt ? 1u : 0u) | (f.odds ? 2u : 0u); }

}  // namespace

// What a stream may receive, by the permission table of rest/access.h:
// the classes of events (live, pre-match) and prices.
uint8_t stream_event_classes(const StreamConn* c) {
  const uint32_t p = c->ticket.permissions;
  return ((p & rest::permission_for(rest::Data::LiveEvent)) ? kLiveEvents : 0) |
         ((p & rest::permission_for(rest::Data::PrematchEvent)) ? kPrematchEvents : 0);
}

StreamFilter StreamConn::filter() const {
  const uint8_t classes = stream_event_classes(this);
  return StreamFilter{ticket.sports, classes != 0, may_odds(this), classes};
}

// One evt:<sport> frame per run of equal sports in `events` (sorted by
// sport), for streams that see `classes` of events.
void RelayLoop::append_event_frames(const std::vector<std::pair<int32_t, EventItem>>& events, uint8_t classes,
                                    std::vector<Out>& out) {
  std::vector<EventItem> items;
  for (size_t i = 0; i < events.size();) {
    const int32_t sport = events[i].first;
    items.clear();
    for (; i < events.size() && events[i].first == sport; ++i) items.push_back(events[i].second);
    out.push_back(Out{pt_events(sport, items), 0, sport, false, {}, classes});
  }
}

// Encodes one batch's frames onto out_; fan_out() sends the turn's frames.
void RelayLoop::process(const Batch& b) {
  if (b.reset) return restart(b);
  if (b.snapshot->seq <= snap_->seq) return;  // already part of the state connections started from
  SnapshotPtr prev = std::move(snap_);
  snap_ = b.snapshot;
  const Snapshot& cur = *snap_;
  stats_.batches.fetch_add(1, std::memory_order_relaxed);
  metrics::turn_batch(b.apply_start_ns);
  if (turn_from_ == 0) turn_from_ = b.first_seq;
  for (const auto& r : b.records) turn_at_ = std::max(turn_at_, r.at);

  const size_t first_out = out_.size();
  // (sport, event) deltas per classes of events a stream may see: a stream
  // sees an event while it is of a class it may see, and a null when it
  // leaves that class (removed, or a pre-match event kicking off).
  std::vector<std::pair<int32_t, EventItem>> evt[4];
  for (const EventChange& ch : b.changes) {
    const EventEntry* now = cur.events.find(ch.number);
    const EventEntry* before = prev->events.find(ch.number);
    const bool listed = now && now->listed(), was_listed = before && before->listed();
    const bool live = now && now->live(), was_live = before && before->live();
    if (ch.bits & (kEventAdded | kEventChanged | kEventRemoved)) {
      // Every class, whoever is connected now: the resume window keeps
      // these frames for streams that come back later.
      for (uint8_t classes = 1; classes < 4; ++classes) {
        auto sees = [&](bool is_live) { return (classes & (is_live ? kLiveEvents : kPrematchEvents)) != 0; };
        if (listed && sees(live)) evt[classes].push_back({now->sport(), EventItem{now->key, now}});
        else if (was_listed && sees(was_live)) evt[classes].push_back({before->sport(), EventItem{before->key, nullptr}});
      }
    }
    if (live && (!was_live || (ch.bits & kOddsChanged))) {
      // An event that just went live gets its whole odds; afterwards only
      // the markets that changed, each whole.
      auto markets = was_live ? b.markets_of(ch) : std::span<const uint32_t>{};
      Out o{pt_odds(*now, now->sport(), markets), ch.number, now->sport(), true, {markets.begin(), markets.end()}};
      if (!was_live)
        for (const MarketRef& m : now->markets) o.markets.push_back(m.id);
      out_.push_back(std::move(o));
    }
    if ((live || was_live) && (ch.bits & (kEventAdded | kEventChanged | kEventRemoved | kScoreChanged | kOddsChanged))) {
      std::string key = listed ? now->key : was_listed ? before->key : std::to_string(ch.number);
      turn_live_.push_back(LiveChange{ch.number, key});
      pending_live_[ch.number] = std::move(key);
    }
    // A removed event without score or stats is gone from `cur` (dropped at
    // commit); its subscribers still learn that its markets went with it.
    if ((ch.bits & kOddsChanged) && (now || before)) {
      auto it = subscribers_.find(ch.number);
      if (it != subscribers_.end()) {
        for (uint32_t m : b.markets_of(ch)) {
          FrameRef f;  // encoded only if some subscriber wants this market
          for (StreamConn* c : it->second) {
            auto sub = std::find_if(c->subs.begin(), c->subs.end(), [&](auto& s) { return s.number == ch.number; });
            if (sub == c->subs.end() || !sub->wants(m)) continue;
            if (!f) f = now ? ws_market(*now, m, cur.clock, cur.seq) : ws_market_removed(before->key, m, cur.clock, cur.seq);
            send(c, f);
          }
        }
      }
    }
  }
  for (uint8_t classes = 1; classes < 4; ++classes) {
    std::stable_sort(evt[classes].begin(), evt[classes].end(), [](auto& a, auto& b) { return a.first < b.first; });
    append_event_frames(evt[classes], classes, out_);
  }
  // Event lists first, then odds: a client learns of an event before its prices.
  std::stable_partition(out_.begin() + static_cast<ptrdiff_t>(first_out), out_.end(),
                        [](const Out& o) { return !o.odds; });
}

// The engine's state was replaced whole (an edge rejoining its log after a
// hole): nothing a stream was sent leads to the new state, and the window
// holds changes of the old one. Every stream is closed with 1012 (service
// restart): a client reconnects and gets the new snapshot, its resume refused
// (too_old, or other_epoch when the log changed). The turn so far is
// dropped with them; the window starts over at the new seq.
void RelayLoop::restart(const Batch& b) {
  for (StreamConn* c : all_) {
    if (c->close_sent || c->closed) continue;
    close_with(c, ws::kServiceRestart, "state replaced: reconnect");
    stats_.closed_restart.fetch_add(1, std::memory_order_relaxed);
  }
  out_.clear();
  turn_live_.clear();
  pending_live_.clear();
  turn_from_ = 0;
  turn_at_ = 0;
  snap_ = b.snapshot;
  window_.clear();
  cache_seq_ = UINT64_MAX;  // connect snapshots are rebuilt from the new state
  publish_window_stats();
}

// Sends the frames of every batch this turn took, then one INFO that closes
// them: {"seq": last record, "from": first record, "at": newest record}. The
// INFO is conflatable too, so a client that lags holds one, not one per batch.
// The turn then goes into the resume window.
void RelayLoop::fan_out() {
  if (turn_from_ == 0) return;
  const uint64_t seq = snap_->seq, from = turn_from_;
  const int64_t at = turn_at_;
  turn_from_ = 0;
  turn_at_ = 0;
  FrameRef marker = pt_marker(seq, from, at);
  stats_.frames_encoded.fetch_add(out_.size() + 1, std::memory_order_relaxed);
  uint64_t delivered = 0;
  for (size_t i = 0; i < pt_.size(); ++i) {
    StreamConn* c = pt_[i];
    const StreamFilter f = c->filter();
    for (const Out& o : out_) {
      if (!f.admits(o)) continue;
      send_group_frame(c, o);
      ++delivered;
    }
    send_marker(c, seq, from, at, marker);
  }
  stats_.deliveries.fetch_add(delivered, std::memory_order_relaxed);
  keep_group(from, seq, at, std::move(marker));
}

// Queues a frame of a group. While a write to the client is in flight, a
// newer odds frame of an event replaces the queued one (SendQueue); when the
// queued one names markets the newer does not, the replacement is this
// connection's own frame naming both sets, encoded from the current state:
// a lagging client skips intermediate prices, never a market's last change.
void RelayLoop::send_group_frame(StreamConn* c, const GroupFrame& o) {
  if (!o.odds || !c->q.in_flight()) return send(c, o.frame, o.channel);
  auto& known = c->queued_markets;  // what each replaceable queued odds frame names
  if (!c->q.will_replace(o.channel)) {
    known[o.channel] = o.markets;
    return send(c, o.frame, o.channel);
  }
  std::vector<uint32_t>& have = known[o.channel];
  if (std::includes(o.markets.begin(), o.markets.end(), have.begin(), have.end())) {
    have = o.markets;
    return send(c, o.frame, o.channel);
  }
  const EventEntry* e = snap_->events.find(o.channel);
  if (!e) return send(c, o.frame, 0);  // the event is gone (its null follows): keep both
  std::vector<uint32_t> both;
  std::set_union(have.begin(), have.end(), o.markets.begin(), o.markets.end(), std::back_inserter(both));
  stats_.frames_encoded.fetch_add(1, std::memory_order_relaxed);
  send(c, pt_odds(*e, o.sport, both), o.channel);
  have = std::move(both);
}

// The INFO closing a group on one connection: `shared` (may be empty) if
// it fits, else the connection's own. A lagging connection's INFO counts the
// frames conflation replaced and, when it replaces a queued INFO, covers
// that INFO's records too, so the INFOs a client reads keep from = previous
// seq + 1.
void RelayLoop::send_marker(StreamConn* c, uint64_t seq, uint64_t from, int64_t at, const FrameRef& shared) {
  const bool replaces = c->q.will_replace(kMarkerChannel);
  // Frames replaced since the last INFO, this INFO's replacement included.
  const uint64_t fresh = c->q.take_conflated() + (replaces ? 1 : 0);
  stats_.conflated.fetch_add(fresh, std::memory_order_relaxed);
  // A replaced INFO hands on its range and its count.
  const uint64_t f = replaces ? c->queued_info_from : from;
  const uint64_t k = fresh + (replaces ? c->queued_info_conflated : 0);
  c->queued_info_from = f;
  c->queued_info_conflated = k;
  if (k == 0 && shared) send(c, shared, kMarkerChannel);
  else send(c, pt_marker(seq, f, at, k), kMarkerChannel);
  if (replaces) c->q.take_conflated();  // the replacement, counted above
}

void RelayLoop::keep_group(uint64_t from, uint64_t seq, int64_t at, FrameRef marker) {
  Group g;
  g.from = from;
  g.seq = seq;
  g.at = at;
  g.marker = std::move(marker);
  g.frames = std::move(out_);
  g.live = std::move(turn_live_);
  out_.clear();
  turn_live_.clear();
  window_.add(std::move(g), now());
  publish_window_stats();
}

void RelayLoop::publish_window_stats() {
  stats_.window_groups.store(window_.size(), std::memory_order_relaxed);
  stats_.window_bytes.store(window_.bytes(), std::memory_order_relaxed);
  stats_.window_oldest.store(window_.empty() ? snap_->seq : window_.front().from - 1, std::memory_order_relaxed);
}

void RelayLoop::refresh_connect_cache() {
  if (cache_seq_ == snap_->seq) return;
  cache_seq_ = snap_->seq;
  for (auto& v : connect_evt_) v.clear();
  connect_evt_built_ = 0;
  connect_odds_.clear();
  for (auto& per_verdict : ws_snapshots_)
    for (FrameRef& f : per_verdict) f.reset();
  // The odds of every live event; the event lists are built per classes
  // of events when a stream that sees them connects.
  std::vector<std::shared_ptr<const EventEntry>> live;
  snap_->events.for_each([&](const EventEntry& e) {
    if (e.listed() && e.live()) live.push_back(snap_->events.find_shared(e.number));
  });
  std::sort(live.begin(), live.end(), [](auto& a, auto& b) { return a->number < b->number; });
  if (full_odds_.size() > 4 * live.size() + 1024) full_odds_.clear();  // drop events long gone
  for (const auto& e : live) {
    FullOdds& f = full_odds_[e->number];
    if (f.version != e) {  // encoded once per version of the event
      f.version = e;
      f.frame = pt_odds(*e, e->sport(), {});
    }
    connect_odds_.push_back(Out{f.frame, e->number, e->sport(), true, {}});
  }
}

// A stream's start: with a usable resume=, what it missed; otherwise (and
// with a refusal's reason when it asked) the connect snapshot.
void RelayLoop::start_stream(StreamConn* c) {
  using V = ResumeWindow::Verdict;
  const rest::StreamTicket& t = c->ticket;
  if (t.resume == rest::StreamTicket::Resume::None) return send_connect_snapshot(c, V::Resumed);
  const ResumeWindow::Lookup l = t.resume == rest::StreamTicket::Resume::Malformed
                                     ? ResumeWindow::Lookup{V::Malformed}
                                     : window_.find(t.resume_epoch, t.resume_seq, snap_->epoch, snap_->seq);
  if (l.verdict != V::Resumed) {
    stats_.resume_refused.fetch_add(1, std::memory_order_relaxed);
    return send_connect_snapshot(c, l.verdict);
  }
  stats_.resumed.fetch_add(1, std::memory_order_relaxed);
  if (c->is_pt()) catch_up_pt(c, l.first, t.resume_seq);
  else catch_up_ws(c, l.first);
}

// The /pt-ws ready INFO: the sports with listed events that pass the
// filter, the channels the key allows.
FrameRef RelayLoop::ready_info(const StreamFilter& filter, ResumeNote note) {
  std::vector<int32_t> sports;
  for (const SportCount& s : snap_->sports)
    if (filter.wants_sport(s.sport)) sports.push_back(s.sport);
  return pt_ready(*snap_, sports, channel_mask(filter), note);
}

// `refused`: why a resume was refused, or Resumed when none was asked for.
void RelayLoop::send_connect_snapshot(StreamConn* c, ResumeWindow::Verdict refused) {
  const ResumeNote note{refused != ResumeWindow::Verdict::Resumed, false, ResumeWindow::reason(refused)};
  refresh_connect_cache();
  const uint8_t classes = stream_event_classes(c);
  if (!c->is_pt()) {
    const bool pre = (classes & kPrematchEvents) != 0;
    FrameRef& f = ws_snapshots_[pre ? 1 : 0][static_cast<size_t>(refused)];
    if (!f) f = ws_snapshot(*snap_, pre, note);
    send_exempt(c, f);
    return;
  }
  if (classes && !(connect_evt_built_ & (1u << classes))) {
    connect_evt_built_ |= static_cast<uint8_t>(1u << classes);
    std::vector<std::pair<int32_t, EventItem>> evt;  // every listed event of those classes, per sport
    snap_->events.for_each([&](const EventEntry& e) {
      if (e.listed() && (classes & (e.live() ? kLiveEvents : kPrematchEvents))) evt.push_back({e.sport(), EventItem{e.key, &e}});
    });
    std::sort(evt.begin(), evt.end(), [](auto& a, auto& b) {
      return std::pair(a.first, a.second.entry->number) < std::pair(b.first, b.second.entry->number);
    });
    append_event_frames(evt, classes, connect_evt_[classes]);
  }
  const StreamFilter filter = c->filter();
  send_exempt(c, ready_info(filter, note));
  for (const Out& o : connect_evt_[classes])
    if (filter.admits(o)) send_exempt(c, o.frame, o.channel);
  for (const Out& o : connect_odds_)
    if (filter.admits(o)) send_exempt(c, o.frame, o.channel);
}

// Resumed /pt-ws: the ready INFO, then the window's groups after `seq` in
// order, filtered as live fan-out filters them, through the bounded send
// queue. Once the socket stops taking bytes a write stays in flight and the
// rest conflates as for any lagging client.
void RelayLoop::catch_up_pt(StreamConn* c, size_t first, uint64_t seq) {
  constexpr size_t kFlushEvery = 256 << 10;
  const StreamFilter filter = c->filter();
  send_exempt(c, ready_info(filter, ResumeNote{true, true, {}}));
  uint64_t delivered = 0;
  for (size_t i = first; i < window_.size() && !c->doomed && !c->closed; ++i) {
    const Group& g = window_[i];
    for (const Out& o : g.frames) {
      if (!filter.admits(o)) continue;
      send_group_frame(c, o);
      ++delivered;
    }
    // seq inside this group: the whole group again (frames replace whole
    // objects, so applying them twice is harmless), its INFO from seq + 1.
    const uint64_t from = std::max(g.from, seq + 1);
    send_marker(c, g.seq, from, g.at, from == g.from ? g.marker : FrameRef());
    if (!c->q.in_flight() && c->q.bytes() >= kFlushEvery) flush(c);
  }
  stats_.deliveries.fetch_add(delivered, std::memory_order_relaxed);
}

// Resumed /ws: {"type":"resumed"}, then one live_update with the current
// state of every live event changed after the client's seq.
void RelayLoop::catch_up_ws(StreamConn* c, size_t first) {
  const auto changed = window_.live_changes(first);
  send_exempt(c, ws_resumed(*snap_, changed.size()));
  if (changed.empty()) return;
  std::vector<EventItem> items;
  items.reserve(changed.size());
  for (const auto& [number, key] : changed) {
    const EventEntry* e = snap_->events.find(number);
    items.push_back(e && e->listed() ? EventItem{e->key, e} : EventItem{key, nullptr});
  }
  send(c, ws_live_update(snap_->last_live_at, snap_->seq, items));
}

// /ws live_update: right away when the last one is at least an interval
// old, else when the interval is up; changes in between are merged.
void RelayLoop::schedule_live_update() {
  if (pending_live_.empty() || live_timer_armed_) return;
  const uint64_t t = now(), interval = static_cast<uint64_t>(opts_.live_update_ms);
  if (last_live_emit_ == 0 || t >= last_live_emit_ + interval) {
    emit_live_update();
    return;
  }
  live_timer_armed_ = true;
  uv_timer_start(&live_timer_, [](uv_timer_t* h) {
    auto* self = static_cast<RelayLoop*>(h->data);
    self->live_timer_armed_ = false;
    self->emit_live_update();
    self->finish_turn();
  }, last_live_emit_ + interval - t, 0);
}

void RelayLoop::emit_live_update() {
  if (pending_live_.empty()) return;
  last_live_emit_ = now();
  if (ws_.empty()) {
    pending_live_.clear();
    return;
  }
  std::vector<std::pair<uint64_t, std::string>> changed(pending_live_.begin(), pending_live_.end());
  pending_live_.clear();
  std::sort(changed.begin(), changed.end());
  std::vector<EventItem> items;
  items.reserve(changed.size());
  for (const auto& [number, key] : changed) {
    const EventEntry* e = snap_->events.find(number);
    items.push_back(e && e->listed() ? EventItem{e->key, e} : EventItem{key, nullptr});
  }
  FrameRef f = ws_live_update(snap_->last_live_at, snap_->seq, items);
  stats_.frames_encoded.fetch_add(1, std::memory_order_relaxed);
  for (StreamConn* c : ws_) send(c, f);
  stats_.deliveries.fetch_add(ws_.size(), std::memory_order_relaxed);
}

// {"subscribe":{"event_id":<id>,"markets":["1001",...]}} adds (or replaces)
// a market subscription; {"unsubscribe":{"event_id":<id>}} removes one.
// Mistakes get an {"error"} message; the connection stays open.
void RelayLoop::on_subscribe_message(StreamConn* c, std::string_view text) {
  auto fail = [&](std::string_view msg) { send(c, ws_error(msg, snap_->seq)); };
  rapidjson::Document d;
  d.Parse(text.data(), text.size());
  if (d.HasParseError() || !d.IsObject()) return fail("Malformed message: expected a JSON object");
  const bool sub = d.HasMember("subscribe"), unsub = d.HasMember("unsubscribe");
  const rapidjson::Value* body = sub ? &d["subscribe"] : unsub ? &d["unsubscribe"] : nullptr;
  if (!body || !body->IsObject() || !body->HasMember("event_id"))
    return fail("Unknown message: expected {\\\"subscribe\\\":{\\\"event_id\\\":...,\\\"markets\\\":[...]}}");
  if (!may_odds(c)) return fail("API key lacks the 'odds' permission");
  const rapidjson::Value& idv = (*body)["event_id"];
  std::string id = idv.IsString() ? std::string(idv.GetString(), idv.GetStringLength())
                 : idv.IsUint64() ? std::to_string(idv.GetUint64()) : std::string();
  ParsedId pid = parse_event_id(id);
  const EventEntry* e = pid.ok() ? snap_->events.find(pid.number) : nullptr;
  auto existing = std::find_if(c->subs.begin(), c->subs.end(), [&](auto& s) { return pid.ok() && s.number == pid.number; });
  if (unsub) {
    if (existing == c->subs.end()) return fail("Not subscribed to that event");
    auto& list = subscribers_[pid.number];
    std::erase(list, c);
    if (list.empty()) subscribers_.erase(pid.number);
    c->subs.erase(existing);
    return;
  }
  if (!e) return fail(rest::err::kEventNotFound);
  Subscription s;
  s.number = e->number;
  if (body->HasMember("markets")) {
    const auto& mv = (*body)["markets"];
    if (!mv.IsArray() || mv.Size() > kMaxSubscribedMarkets)
      return fail("Invalid markets: expected at most 200 market ids");
    for (const auto& m : mv.GetArray()) {
      uint32_t id = 0;
      if (m.IsUint()) id = m.GetUint();
      else if (m.IsString()) {
        std::string_view t(m.GetString(), m.GetStringLength());
        auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), id);
        if (ec != std::errc() || p != t.data() + t.size()) id = 0;
      }
      if (id == 0) return fail("Invalid markets: expected market ids such as \\\"1001\\\"");
      if (std::find(s.markets.begin(), s.markets.end(), id) == s.markets.end()) s.markets.push_back(id);
    }
  }
  if (existing != c->subs.end()) {
    *existing = s;
  } else {
    if (c->subs.size() >= kMaxSubscriptions) return fail("Too many subscriptions: at most 100 events");
    c->subs.push_back(s);
    subscribers_[s.number].push_back(c);
  }
  send(c, ws_subscribed(e->key, s.markets, snap_->seq));
  // The current state of each subscribed market, then changes as they come.
  for (const MarketRef& m : e->markets)
    if (s.wants(m.id)) send(c, ws_market(*e, m.id, snap_->clock, snap_->seq));
}

void RelayLoop::unsubscribe_all(StreamConn* c) {
  for (const Subscription& s : c->subs) {
    auto it = subscribers_.find(s.number);
    if (it == subscribers_.end()) continue;
    std::erase(it->second, c);
    if (it->second.empty()) subscribers_.erase(it);
  }
  c->subs.clear();
}

}  // namespace oddsrelay::relay
