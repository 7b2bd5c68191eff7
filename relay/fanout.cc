// Fan-out of the relay loop (see relay_loop.h): each engine batch becomes a
// handful of frames, encoded once, queued to every subscriber whose
// permissions and sports filter admit them; connect snapshots; /ws live
// updates at most once per interval; /ws market subscriptions.
#include <algorithm>
#include <charconv>

#include <rapidjson/document.h>

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

FrameRef error_frame(std::string_view msg) {
  std::string s = "{\"error\":\"";
  s += msg;  // our own constants: no quotes or backslashes
  s += "\"}";
  return text_frame(s);
}

}  // namespace

// What a stream may receive, by the permission table of rest/access.h:
// the classes of events (live, pre-match) and prices.
uint8_t stream_event_classes(const StreamConn* c) {
  const uint32_t p = c->ticket.permissions;
  return ((p & rest::permission_for(rest::Data::LiveEvent)) ? kLiveEvents : 0) |
         ((p & rest::permission_for(rest::Data::PrematchEvent)) ? kPrematchEvents : 0);
}

// The one check of what a /pt-ws stream receives: an odds frame needs the
// price permission, an event list is sent to the streams whose key sees
// exactly the classes of events it was encoded for (each class has its own
// frames, so a key without 'prematch' never gets a pre-match event), and
// the sports filter applies to both.
bool RelayLoop::admits(const StreamConn* c, const Out& o) {
  return (o.odds ? may_odds(c) : o.events == stream_event_classes(c)) && c->wants_sport(o.sport);
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
    out.push_back(Out{pt_events(sport, items), 0, sport, false, classes});
  }
}

// Encodes one batch's frames onto out_; fan_out() sends the turn's frames.
void RelayLoop::process(const Batch& b) {
  if (b.snapshot->seq <= snap_->seq) return;  // already part of the state connections started from
  SnapshotPtr prev = std::move(snap_);
  snap_ = b.snapshot;
  const Snapshot& cur = *snap_;
  stats_.batches.fetch_add(1, std::memory_order_relaxed);
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
      for (uint8_t classes = 1; classes < 4; ++classes) {
        if (!pt_by_classes_[classes]) continue;
        auto sees = [&](bool is_live) { return (classes & (is_live ? kLiveEvents : kPrematchEvents)) != 0; };
        if (listed && sees(live)) evt[classes].push_back({now->sport(), EventItem{now->key, now}});
        else if (was_listed && sees(was_live)) evt[classes].push_back({before->sport(), EventItem{before->key, nullptr}});
      }
    }
    if (live && (!was_live || (ch.bits & kOddsChanged))) {
      // An event that just went live gets its whole odds; afterwards only
      // the markets that changed, each whole.
      auto markets = was_live ? b.markets_of(ch) : std::span<const uint32_t>{};
      Out o{pt_odds(*now, now->sport(), markets), ch.number, now->sport(), true};
      o.markets_first = static_cast<uint32_t>(out_markets_.size());
      if (was_live) {
        out_markets_.insert(out_markets_.end(), markets.begin(), markets.end());
      } else {
        for (const MarketRef& m : now->markets) out_markets_.push_back(m.id);
      }
      o.markets_count = static_cast<uint32_t>(out_markets_.size()) - o.markets_first;
      out_.push_back(std::move(o));
    }
    if ((live || was_live) && (ch.bits & (kEventAdded | kEventChanged | kEventRemoved | kScoreChanged | kOddsChanged)))
      pending_live_[ch.number] = listed ? now->key : was_listed ? before->key : std::to_string(ch.number);
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
            if (!f) f = now ? ws_market(*now, m, cur.clock) : ws_market_removed(before->key, m, cur.clock);
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

// Sends the frames of every batch this turn took, then one INFO that closes
// them: {"seq": last record, "from": first record, "at": newest record}. The
// INFO is conflatable too, so a client that lags holds one, not one per batch.
void RelayLoop::fan_out() {
  if (turn_from_ == 0) return;
  const uint64_t seq = snap_->seq, from = turn_from_;
  const int64_t at = turn_at_;
  turn_from_ = 0;
  turn_at_ = 0;
  const FrameRef marker = pt_marker(seq, from, at);
  stats_.frames_encoded.fetch_add(out_.size() + 1, std::memory_order_relaxed);
  uint64_t delivered = 0;
  for (size_t i = 0; i < pt_.size(); ++i) {
    StreamConn* c = pt_[i];
    for (const Out& o : out_) {
      if (!admits(c, o)) continue;
      if (o.odds) send_odds(c, o);
      else send(c, o.frame, o.channel);
      ++delivered;
    }
    // An INFO that replaces a queued one closes that one's batches too.
    uint64_t first = from;
    int64_t newest = at;
    if (c->q.would_conflate(kMarkerChannel)) {
      first = c->queued_info_from;
      newest = c->queued_info_at = std::max(at, c->queued_info_at);
    } else if (c->q.in_flight()) {
      c->queued_info_from = from;
      c->queued_info_at = at;
    }
    if (uint64_t k = c->q.take_conflated()) {
      stats_.conflated.fetch_add(k, std::memory_order_relaxed);
      send(c, pt_marker(seq, first, newest, k), kMarkerChannel);  // this connection's own INFO says so
    } else {
      send(c, first == from ? marker : pt_marker(seq, first, newest), kMarkerChannel);
    }
  }
  stats_.deliveries.fetch_add(delivered, std::memory_order_relaxed);
  out_.clear();
  out_markets_.clear();
}

// The slow path of a lagging connection: a newer odds frame of a channel
// replaces the queued one (send_queue.h). Each names only the markets its
// batch changed, so the replacement is re-encoded from the current state
// with the markets of both (null for a removed one): nothing is lost.
void RelayLoop::send_odds(StreamConn* c, const Out& o) {
  const uint32_t* ids = out_markets_.data() + o.markets_first;
  if (!c->q.in_flight()) return send(c, o.frame, o.channel);
  auto [it, fresh] = c->queued_odds.try_emplace(o.channel);
  std::vector<uint32_t>& named = it->second;
  const EventEntry* e = snap_->events.find(o.channel);
  if (fresh || !c->q.would_conflate(o.channel) || !e) {
    // Nothing of the channel queued (or the event is gone, and with it its odds).
    named.assign(ids, ids + o.markets_count);
    return send(c, o.frame, o.channel);
  }
  const size_t mid = named.size();
  named.insert(named.end(), ids, ids + o.markets_count);
  std::inplace_merge(named.begin(), named.begin() + static_cast<ptrdiff_t>(mid), named.end());
  named.erase(std::unique(named.begin(), named.end()), named.end());
  send(c, pt_odds(*e, o.sport, named), o.channel);
}

void RelayLoop::refresh_connect_cache() {
  if (cache_seq_ == snap_->seq) return;
  cache_seq_ = snap_->seq;
  for (auto& v : connect_evt_) v.clear();
  connect_evt_built_ = 0;
  connect_odds_.clear();
  ws_snapshot_[0].reset();
  ws_snapshot_[1].reset();
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
    connect_odds_.push_back(Out{f.frame, e->number, e->sport(), true});
  }
}

void RelayLoop::send_connect_snapshot(StreamConn* c) {
  refresh_connect_cache();
  const uint8_t classes = stream_event_classes(c);
  if (!c->is_pt()) {
    FrameRef& f = ws_snapshot_[(classes & kPrematchEvents) ? 1 : 0];
    if (!f) f = ws_snapshot(*snap_, (classes & kPrematchEvents) != 0);
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
  std::vector<int32_t> sports;
  for (const SportCount& s : snap_->sports)
    if (c->wants_sport(s.sport)) sports.push_back(s.sport);
  send_exempt(c, pt_ready(*snap_, sports, (classes ? 1u : 0u) | (may_odds(c) ? 2u : 0u)));
  for (const Out& o : connect_evt_[classes])
    if (admits(c, o)) send_exempt(c, o.frame, o.channel);
  for (const Out& o : connect_odds_)
    if (admits(c, o)) send_exempt(c, o.frame, o.channel);
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
  FrameRef f = ws_live_update(snap_->last_live_at, items);
  stats_.frames_encoded.fetch_add(1, std::memory_order_relaxed);
  for (StreamConn* c : ws_) send(c, f);
  stats_.deliveries.fetch_add(ws_.size(), std::memory_order_relaxed);
}

// {"subscribe":{"event_id":<id>,"markets":["1001",...]}} adds (or replaces)
// a market subscription; {"unsubscribe":{"event_id":<id>}} removes one.
// Mistakes get an {"error"} message; the connection stays open.
void RelayLoop::on_subscribe_message(StreamConn* c, std::string_view text) {
  rapidjson::Document d;
  d.Parse(text.data(), text.size());
  if (d.HasParseError() || !d.IsObject()) return send(c, error_frame("Malformed message: expected a JSON object"));
  const bool sub = d.HasMember("subscribe"), unsub = d.HasMember("unsubscribe");
  const rapidjson::Value* body = sub ? &d["subscribe"] : unsub ? &d["unsubscribe"] : nullptr;
  if (!body || !body->IsObject() || !body->HasMember("event_id"))
    return send(c, error_frame("Unknown message: expected {\\\"subscribe\\\":{\\\"event_id\\\":...,\\\"markets\\\":[...]}}"));
  if (!may_odds(c)) return send(c, error_frame("API key lacks the 'odds' permission"));
  const rapidjson::Value& idv = (*body)["event_id"];
  std::string id = idv.IsString() ? std::string(idv.GetString(), idv.GetStringLength())
                 : idv.IsUint64() ? std::to_string(idv.GetUint64()) : std::string();
  ParsedId pid = parse_event_id(id);
  const EventEntry* e = pid.ok() ? snap_->events.find(pid.number) : nullptr;
  auto existing = std::find_if(c->subs.begin(), c->subs.end(), [&](auto& s) { return pid.ok() && s.number == pid.number; });
  if (unsub) {
    if (existing == c->subs.end()) return send(c, error_frame("Not subscribed to that event"));
    auto& list = subscribers_[pid.number];
    std::erase(list, c);
    if (list.empty()) subscribers_.erase(pid.number);
    c->subs.erase(existing);
    return;
  }
  if (!e) return send(c, error_frame(rest::err::kEventNotFound));
  Subscription s;
  s.number = e->number;
  if (body->HasMember("markets")) {
    const auto& mv = (*body)["markets"];
    if (!mv.IsArray() || mv.Size() > kMaxSubscribedMarkets)
      return send(c, error_frame("Invalid markets: expected at most 200 market ids"));
    for (const auto& m : mv.GetArray()) {
      uint32_t id = 0;
      if (m.IsUint()) id = m.GetUint();
      else if (m.IsString()) {
        std::string_view t(m.GetString(), m.GetStringLength());
        auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), id);
        if (ec != std::errc() || p != t.data() + t.size()) id = 0;
      }
      if (id == 0) return send(c, error_frame("Invalid markets: expected market ids such as \\\"1001\\\""));
      if (std::find(s.markets.begin(), s.markets.end(), id) == s.markets.end()) s.markets.push_back(id);
    }
  }
  if (existing != c->subs.end()) {
    *existing = s;
  } else {
    if (c->subs.size() >= kMaxSubscriptions) return send(c, error_frame("Too many subscriptions: at most 100 events"));
    c->subs.push_back(s);
    subscribers_[s.number].push_back(c);
  }
  send(c, ws_subscribed(e->key, s.markets));
  // The current state of each subscribed market, then changes as they come.
  for (const MarketRef& m : e->markets)
    if (s.wants(m.id)) send(c, ws_market(*e, m.id, snap_->clock));
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
