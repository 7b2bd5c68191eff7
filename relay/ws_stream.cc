// /ws snapshots, live updates and market subscriptions (ws_stream.h).
#include "relay/ws_stream.h"

#include <algorithm>

#include "protocol/api/errors.h"
#include "protocol/event_id.h"
#include "relay/ws_message.h"

namespace oddsrelay::relay {

namespace {

constexpr size_t kMaxSubscriptions = 100;  // events per /ws connection

}  // namespace

void WsStreams::add(StreamConn* c) {
  list_add(list_, c, &StreamConn::fan_slot);
  ctx_.stats.ws_connections.fetch_add(1, std::memory_order_relaxed);
}

void WsStreams::remove(StreamConn* c) {
  if (c->listed()) {
    ctx_.stats.ws_connections.fetch_sub(1, std::memory_order_relaxed);
    list_remove(list_, c, &StreamConn::fan_slot);
  }
  unsubscribe_all(c);
}

void WsStreams::error(StreamConn* c, std::string_view msg) { ctx_.out.send(c, ws_error(msg, ctx_.snap->seq)); }

void WsStreams::start(StreamConn* c, ResumeWindow::Verdict v, size_t first) {
  if (v == ResumeWindow::Verdict::Resumed && c->ticket.resume == api::StreamTicket::Resume::Asked)
    return catch_up(c, first);
  const Snapshot& s = *ctx_.snap;
  if (cache_seq_ != s.seq) {
    cache_seq_ = s.seq;
    for (auto& per_verdict : snapshots_)
      for (FrameRef& f : per_verdict) f.reset();
  }
  const ResumeNote note{v != ResumeWindow::Verdict::Resumed, false, ResumeWindow::reason(v)};
  const bool pre = (stream_event_classes(c) & kPrematchEvents) != 0;
  FrameRef& f = snapshots_[pre ? 1 : 0][static_cast<size_t>(v)];
  if (!f) f = ws_snapshot(s, pre, note);
  ctx_.out.send_exempt(c, f);
}

// Resumed: {"type":"resumed"}, then one live_update with the current state
// of every live event changed after the client's seq.
void WsStreams::catch_up(StreamConn* c, size_t first) {
  const Snapshot& s = *ctx_.snap;
  const auto changed = ctx_.window.live_changes(first);
  ctx_.out.send_exempt(c, ws_resumed(s, changed.size()));
  if (changed.empty()) return;
  std::vector<EventItem> items;
  items.reserve(changed.size());
  for (const auto& [number, key] : changed) {
    const EventEntry* e = s.events.find(number);
    items.push_back(e && e->listed() ? EventItem{e->key, e} : EventItem{key, nullptr});
  }
  ctx_.out.send(c, ws_live_update(s.last_live_at, s.seq, items));
}

void WsStreams::on_batch(const SharedBatch& b) {
  for (const LiveChange& l : b.live) pending_live_[l.number] = l.key;
  if (subscribers_.empty()) return;
  const Snapshot& cur = *b.batch->snapshot;
  const Snapshot& prev = *b.prev;
  for (const EventChange& ch : b.batch->changes) {
    if (!(ch.bits & kOddsChanged)) continue;
    auto it = subscribers_.find(ch.number);
    if (it == subscribers_.end()) continue;
    // A removed event without score or stats is gone from `cur` (dropped at
    // commit); its subscribers still learn that its markets went with it.
    const EventEntry* now = cur.events.find(ch.number);
    const EventEntry* before = prev.events.find(ch.number);
    if (!now && !before) continue;
    for (uint32_t m : b.batch->markets_of(ch)) {
      FrameRef f;  // encoded only if some subscriber wants this market
      for (StreamConn* c : it->second) {
        auto sub = std::find_if(c->subs.begin(), c->subs.end(), [&](auto& s) { return s.number == ch.number; });
        if (sub == c->subs.end() || !sub->wants(m)) continue;
        if (!f)
          f = now ? ws_market(*now, m, cur.clock, cur.seq) : ws_market_removed(before->key, m, cur.clock, cur.seq);
        ctx_.out.send(c, f);
      }
    }
  }
}

// A live_update right away when the last one is at least an interval old,
// else when the interval is up; changes in between are merged.
void WsStreams::schedule_live_update() {
  if (pending_live_.empty() || timer_armed_) return;
  const uint64_t t = ctx_.now, interval = static_cast<uint64_t>(ctx_.opts.live_update_ms);
  if (last_live_emit_ == 0 || t >= last_live_emit_ + interval || !arm_timer) {
    emit_live_update();
    return;
  }
  timer_armed_ = true;
  arm_timer(last_live_emit_ + interval - t);
}

void WsStreams::on_timer() {
  timer_armed_ = false;
  emit_live_update();
}

void WsStreams::emit_live_update() {
  if (pending_live_.empty()) return;
  last_live_emit_ = std::max<uint64_t>(ctx_.now, 1);
  if (list_.empty()) {
    pending_live_.clear();
    return;
  }
  std::vector<std::pair<uint64_t, std::string>> changed(pending_live_.begin(), pending_live_.end());
  pending_live_.clear();
  std::sort(changed.begin(), changed.end());
  const Snapshot& s = *ctx_.snap;
  std::vector<EventItem> items;
  items.reserve(changed.size());
  for (const auto& [number, key] : changed) {
    const EventEntry* e = s.events.find(number);
    items.push_back(e && e->listed() ? EventItem{e->key, e} : EventItem{key, nullptr});
  }
  FrameRef f = ws_live_update(s.last_live_at, s.seq, items);
  ctx_.stats.frames_encoded.fetch_add(1, std::memory_order_relaxed);
  for (StreamConn* c : list_) ctx_.out.send(c, f);
  ctx_.stats.deliveries.fetch_add(list_.size(), std::memory_order_relaxed);
}

// {"subscribe":{"event_id":<id>,"markets":["1001",...]}} adds (or replaces)
// a market subscription; {"unsubscribe":{"event_id":<id>}} removes one.
// Mistakes get an {"error"} message; the connection stays open.
void WsStreams::on_text(StreamConn* c, std::string_view text) {
  const Snapshot& snap = *ctx_.snap;
  auto fail = [&](std::string_view msg) { error(c, msg); };
  WsMessage msg;
  if (std::string bad = parse_ws_message(text, msg); !bad.empty()) return fail(bad);
  if (!may_odds(c)) return fail("API key lacks the 'odds' permission");
  ParsedId pid = parse_event_id(msg.event_id);
  const EventEntry* e = pid.ok() ? snap.events.find(pid.number) : nullptr;
  auto existing =
      std::find_if(c->subs.begin(), c->subs.end(), [&](auto& s) { return pid.ok() && s.number == pid.number; });
  if (!msg.subscribe) {
    if (existing == c->subs.end()) return fail("Not subscribed to that event");
    auto& list = subscribers_[pid.number];
    std::erase(list, c);
    if (list.empty()) subscribers_.erase(pid.number);
    c->subs.erase(existing);
    return;
  }
  if (!e) return fail(api::err::kEventNotFound);
  if (!msg.markets_error.empty()) return fail(msg.markets_error);
  Subscription s;
  s.number = e->number;
  s.markets = std::move(msg.markets);
  if (existing != c->subs.end()) {
    *existing = s;
  } else {
    if (c->subs.size() >= kMaxSubscriptions) return fail("Too many subscriptions: at most 100 events");
    c->subs.push_back(s);
    subscribers_[s.number].push_back(c);
  }
  ctx_.out.send(c, ws_subscribed(e->key, s.markets, snap.seq));
  // The current state of each subscribed market, then changes as they come.
  for (const MarketRef& m : e->markets)
    if (s.wants(m.id)) ctx_.out.send(c, ws_market(*e, m.id, snap.clock, snap.seq));
}

void WsStreams::unsubscribe_all(StreamConn* c) {
  for (const Subscription& s : c->subs) {
    auto it = subscribers_.find(s.number);
    if (it == subscribers_.end()) continue;
    std::erase(it->second, c);
    if (it->second.empty()) subscribers_.erase(it);
  }
  c->subs.clear();
}

}  // namespace oddsrelay::relay
