// GET /v1/status: counters for operators, from this snapshot and the
// components' own counters; nothing here needs a permission.
#include "protocol/api/errors.h"
#include "protocol/clock.h"
#include "rest/api/handlers.h"
#include "rest/http_server.h"
#include "rest/metrics_endpoint.h"

namespace oddsrelay::rest::routes {

namespace {

// What the state holds and what retention took (docs/api.md). The four
// kinds partition the events held: live and pre-match count listed events
// without a final; ended, every held event with one (listed or not);
// other, the rest (removed without a final, odds before their event).
void write_retention_status(json::Writer& w, const Snapshot& s) {
  const uint64_t held = s.events.size(), live = s.listed_live - s.ended_live,
                 prematch = s.listed_prematch - s.ended_prematch;
  w.Key("events");
  w.StartObject();
  w.Key("held");
  w.Uint64(held);
  w.Key("live");
  w.Uint64(live);
  w.Key("prematch");
  w.Uint64(prematch);
  w.Key("ended");
  w.Uint64(s.ended);
  w.Key("other");
  w.Uint64(held - live - prematch - s.ended);
  w.Key("evicted");
  w.Uint64(s.evicted);
  w.EndObject();
  w.Key("state_bytes");
  w.Uint64(s.bytes);
  w.Key("retain_ended");
  w.Int64(s.retain_ended_ms / 1000);
  w.Key("feed_clock");
  w.Int64(s.feed_clock);
}

}  // namespace

// A counter summed over every REST loop's caches.
template <typename F>
static uint64_t sum(const RestApi& api, F f) {
  uint64_t n = 0;
  for (const auto& l : api.loops) n += f(*l);
  return n;
}

void status(Call& c) {
  const Snapshot& snap = *c.snap;
  const RestInputs& in = c.api.inputs;
  c.begin_success();
  c.w.Key("status");
  c.w.String("ok");
  // The same counts as events.live/prematch below: listed and not ended (an
  // ended match still in the feed's lists is in events.ended).
  c.w.Key("live_events");
  c.w.Uint64(snap.listed_live - snap.ended_live);
  c.w.Key("prematch_events");
  c.w.Uint64(snap.listed_prematch - snap.ended_prematch);
  c.w.Key("last_update");
  c.w.Int64(snap.clock);
  c.w.Key("seq");
  c.w.Uint64(snap.seq);
  c.w.Key("epoch");
  json::str(c.w, snap.epoch);
  write_retention_status(c.w, snap);
  c.w.Key("uptime");
  c.w.Int64((wall_ms() - in.started_ms) / 1000);
  // The relay statistics: el_* are the live event lists (rdstn `el`),
  // odds_channels the /pt-ws odds:<sport>:<event> channels (one per live
  // event with odds), odds_cached the events whose odds JSON is cached.
  uint64_t el_sports = 0, odds_channels = 0;
  for (const SportCount& sc : snap.sports) el_sports += sc.live > 0;
  snap.events.for_each([&](const EventEntry& e) { odds_channels += e.live() && !e.markets.empty(); });
  c.w.Key("upstream_ready");
  c.w.Bool(in.upstream_ready && in.upstream_ready());
  c.w.Key("downstream_clients");
  c.w.Uint64(in.downstream_clients ? in.downstream_clients() : 0);
  c.w.Key("odds_channels");
  c.w.Uint64(odds_channels);
  c.w.Key("el_sports");
  c.w.Uint64(el_sports);
  c.w.Key("el_events");
  c.w.Uint64(snap.listed_live);
  c.w.Key("odds_cached");
  c.w.Uint64(sum(c.api, [](const LoopCaches& l) { return l.odds.size(); }));
  // How often the hot answers were encoded (docs/api.md "Answer caches"):
  // odds fragments and deflated fragments once per event version, lists
  // once per state, gzip of a list once per state.
  c.w.Key("rest_cache");
  c.w.StartObject();
  c.w.Key("odds_encoded");
  c.w.Uint64(sum(c.api, [](const LoopCaches& l) { return l.odds.misses(); }));
  c.w.Key("odds_deflated");
  c.w.Uint64(sum(c.api, [](const LoopCaches& l) { return l.odds.deflates(); }));
  c.w.Key("lists_built");
  c.w.Uint64(sum(c.api, [](const LoopCaches& l) { return l.lists.misses(); }));
  c.w.Key("lists_gzipped");
  c.w.Uint64(sum(c.api, [](const LoopCaches& l) { return l.lists.gzips(); }));
  c.w.EndObject();
  c.w.Key("feed");
  if (in.feed_status)
    in.feed_status(c.w);
  else
    c.w.Null();
  c.w.Key("settlements");
  c.w.StartObject();
  c.w.Key("computed");
  c.w.Uint64(sum(c.api, [](const LoopCaches& l) { return l.settlements.computed(); }));
  c.w.Key("served");
  c.w.Uint64(sum(c.api, [](const LoopCaches& l) { return l.settlements.served(); }));
  c.w.EndObject();
  if (in.history) {
    // The odds history's size, so that its bytes a point are measured
    // (perf/history/run.sh), not estimated.
    const history::HeldState h = in.history->state();
    c.w.Key("history");
    c.w.StartObject();
    c.w.Key("seq");
    c.w.Uint64(h.seq);
    c.w.Key("events");
    c.w.Uint64(h.events);
    c.w.Key("points");
    c.w.Uint64(h.points);
    c.w.Key("bytes");
    c.w.Uint64(h.bytes);
    c.w.Key("held_from");
    c.w.Int64(h.held_from);
    c.w.Key("held_from_seq");
    c.w.Uint64(h.held_from_seq);
    c.w.Key("loading");
    c.w.Bool(in.history_loading && in.history_loading());
    if (in.history_files_status) in.history_files_status(c.w);
    c.w.EndObject();
  }
  if (in.relay_status) {
    c.w.Key("relay");
    in.relay_status(c.w);
  }
  if (in.webhook_status) {
    c.w.Key("webhooks");
    in.webhook_status(c.w);
  }
  c.w.Key("log");
  if (in.log_status)
    in.log_status(c.w);
  else
    c.w.Null();
  c.w.Key("bus");
  if (in.bus_status)
    in.bus_status(c.w);
  else
    c.w.Null();
  if (in.server) {
    c.w.Key("http");
    c.w.StartObject();
    c.w.Key("connections");
    c.w.Uint64(in.server->connections());
    c.w.Key("requests");
    c.w.Uint64(in.server->requests());
    c.w.Key("internal_errors");  // requests answered 500: a handler threw
    c.w.Uint64(in.server->internal_errors());
    c.w.Key("loop_requests");  // per REST loop (--http-threads): how the connections were dealt
    c.w.StartArray();
    for (uint64_t n : in.server->loop_requests()) c.w.Uint64(n);
    c.w.EndArray();
    // Unsent bytes, closes by reason, connection-limit refusals (rest/http_stats.h).
    metrics::write_status_fields(c.w, in.server->stats(), http_stats());
    c.w.EndObject();
  }
  c.w.EndObject();
  c.send(200);
}

// GET /metrics on the main listener; with --metrics-listen it lives there
// instead and this route answers 404.
void metrics(Call& c) {
  if (!c.api.inputs.metrics) return c.error(404, err::kNotFound);
  append_metrics(*c.api.inputs.metrics, c.req, c.out.tail());
}

}  // namespace oddsrelay::rest::routes
