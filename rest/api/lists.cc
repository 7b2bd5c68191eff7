// GET /v1/live and GET /v1/prematch: the listed events, by sport. Answers
// are cached per parameters and engine state (rest/list_cache.h).
#include "engine/views/json_views.h"
#include "protocol/api/envelope.h"
#include "protocol/api/errors.h"
#include "rest/api/handlers.h"
#include "rest/params.h"

namespace oddsrelay::rest::routes {

namespace {

std::string encode(const Snapshot& snap, bool live, std::optional<int32_t> sport, std::optional<uint32_t> limit) {
  auto groups = list_events(snap, live, sport, limit);
  return success_body([&](json::Writer& w) {
    if (live) {
      w.Key("ts");
      w.Int64(snap.last_live_at);
    }
    w.Key("sport");
    if (sport)
      w.Int(*sport);
    else
      w.Null();
    w.Key("data");
    if (sport) {
      write_events(w, groups.empty() ? std::vector<const EventEntry*>{} : groups[0].events);
    } else {
      w.StartObject();
      for (const auto& g : groups) {
        json::key(w, std::to_string(g.sport));
        write_events(w, g.events);
      }
      w.EndObject();
    }
  });
}

void list(Call& c, bool live) {
  std::optional<int32_t> sport;
  if (!sport_param(c, sport)) return;
  std::optional<uint32_t> limit;
  if (!live) {
    if (auto v = c.param("limit"); v && !v->empty()) {
      auto n = parse_int(*v);
      if (!n || *n < 1 || *n > 10000) return c.error(400, err::kBadLimit);
      limit = static_cast<uint32_t>(*n);
    }
  }
  // Every poller of this list between two batches gets the bytes built for
  // the first, and the gzip form compressed for the first that asked.
  ListCache& cache = c.cache.lists;
  ListCache::Answer* a = cache.find(*c.snap, live, sport, limit);
  if (!a) a = &cache.put(*c.snap, live, sport, limit, encode(*c.snap, live, sport, limit));
  // The connection queues a reference to the cached bytes, not a copy.
  if (a->body->size() > Call::kGzipMin && c.accepts_gzip())
    if (const net::SharedBytes& gz = cache.gzip(*a)) return c.send_shared(200, gz, "gzip");
  c.send_shared(200, a->body, {});
}

}  // namespace

void live(Call& c) { list(c, true); }
void prematch(Call& c) { list(c, false); }

}  // namespace oddsrelay::rest::routes
