// GET /v1/odds?ids= (4-element outcome tuples, from the per-event cache,
// with a weak ETag and 304) and POST /v1/odds (one market, 5-element
// tuples, a bare object; no ETag: a POST answer is not cached, and a
// matching If-None-Match on POST would have to be a 412). With digest=1 a
// GET answer also names its position and the digest of its outcomes
// (engine/core/odds_digest.h), for clients that check a stream's replica.
#include <algorithm>

#include "engine/core/odds_digest.h"
#include "engine/views/json_views.h"
#include "protocol/api/errors.h"
#include "rest/api/handlers.h"
#include "rest/api/odds_parts.h"
#include "rest/gzip_pieces.h"
#include "rest/odds_body.h"
#include "rest/odds_cache.h"
#include "rest/odds_etag.h"
#include "rest/params.h"

namespace oddsrelay::rest::routes {

namespace {

// The constant parts of a GET answer around the events' fragments, each
// deflated once for the assembled gzip form.
// The tail names the asked ids that match no event (`not_found`, as on
// /v1/settlements); a poller whose ids all exist gets the constant tail.
constexpr std::string_view kHead = "{\"success\":true,\"data\":{", kComma = ",", kTail = "},\"not_found\":[]}";
struct Frame {
  DeflatePiece head, comma, tail;
  bool ok = deflate_piece(kHead, head) && deflate_piece(kComma, comma) && deflate_piece(kTail, tail);
};

// The constant tail when every id was found (its deflated form is made once).
std::string tail_for(const std::vector<std::string>& missing) {
  return missing.empty() ? std::string(kTail) : not_found_tail(missing);
}

// The gzip answer from the fragments' deflated forms; false when a
// compression failed (then the caller sends the plain answer).
bool assemble_gzip(OddsCache& cache, const std::vector<OddsCache::Fragment*>& frags, std::string_view tail,
                   std::string& out) {
  static const Frame frame;
  if (!frame.ok) return false;
  DeflatePiece own_tail;
  if (tail != kTail && !deflate_piece(tail, own_tail)) return false;
  GzipAssembler gz(out);
  gz.add(frame.head);
  for (size_t i = 0; i < frags.size(); ++i) {
    const DeflatePiece* p = cache.deflated(*frags[i]);
    if (!p) return false;
    if (i) gz.add(frame.comma);
    gz.add(*p);
  }
  gz.add(tail == kTail ? frame.tail : own_tail);
  gz.finish();
  return true;
}

// digest=1: the tail also carries the answer's digest (the sum of each
// event's, kept by the engine: no outcome is hashed here), seq and epoch.
std::string digest_tail(const Call& c, const std::vector<const EventEntry*>& events, std::string tail) {
  uint64_t sum = 0;
  for (const EventEntry* e : events) sum += e->odds_digest;
  tail.pop_back();  // the closing brace
  tail += ",\"digest\":\"" + digest_hex(sum) + "\",\"seq\":" + std::to_string(c.snap->seq) + ",\"epoch\":";
  json::StringSink sink(tail);
  json::Writer w(sink);
  json::str(w, c.snap->epoch);
  tail += '}';
  return tail;
}

void get_odds(Call& c) {
  if (auto at = c.param("at"); at && !at->empty()) return odds_at(c, *at);
  std::vector<const EventEntry*> asked, events;
  std::vector<std::string> missing;
  if (!resolve_ids(c, split_ids(c.param("ids").value_or("")), asked, &missing)) return;
  for (const EventEntry* e : asked)
    if (e->listed() || !e->markets.empty())
      events.push_back(e);
    else
      missing.push_back(e->key);  // unknown to clients: absent, named as not found
  const bool with_digest = c.param("digest").value_or("") == "1";
  const std::string tail = with_digest ? digest_tail(c, events, tail_for(missing)) : tail_for(missing);
  // The tag is known before anything is encoded: a poller whose events did
  // not change costs a hash of 100 pairs and an empty answer. A digest=1
  // answer also names its seq, which moves when these events do not: its
  // tag is drawn from a seed that the seq changes.
  const uint64_t seed = with_digest ? c.api.etag_seed ^ (c.snap->seq * 0x9e3779b97f4a7c15ull + 1) : c.api.etag_seed;
  const std::string etag = odds_etag(seed, events);
  const std::string extra = "ETag: " + etag + "\r\nCache-Control: no-cache\r\n";
  if (c.not_modified(etag)) return c.send_raw(304, {}, {}, extra);
  // Assembled from per-event fragments encoded once per version, plain or
  // deflated, with plain appends: nothing is encoded per request.
  OddsCache& cache = c.cache.odds;
  cache.trim();
  std::vector<OddsCache::Fragment*> frags;
  frags.reserve(events.size());
  size_t plain = kHead.size() + tail.size();
  for (const EventEntry* e : events) {
    frags.push_back(&cache.get(c.snap->events.find_shared(e->number)));
    plain += frags.back()->json.size() + 1;
  }
  if (plain > Call::kGzipMin && c.accepts_gzip()) {
    std::string z;
    if (assemble_gzip(cache, frags, tail, z)) return c.send_json(200, z, "gzip", extra);
  }
  std::string& b = c.body;
  b.reserve(plain);
  b += kHead;
  for (size_t i = 0; i < frags.size(); ++i) {
    if (i) b += kComma;
    b += frags[i]->json;
  }
  b += tail;
  c.send_json(200, b, {}, extra);
}

void post_odds(Call& c) {
  OddsBody body;
  if (std::string bad = parse_odds_body(c.req.body, body, kMaxIds); !bad.empty()) return c.error(400, bad);
  std::vector<const EventEntry*> events;
  if (!resolve_ids(c, body.ids, events)) return;
  const std::optional<int32_t> sport = body.sport;
  const uint32_t market = body.market;
  c.w.StartObject();  // a bare object, as the interface shows
  for (const EventEntry* e : events) {
    if ((sport && e->listed() && e->sport() != *sport) || !e->market(market)) continue;
    json::key(c.w, e->key);
    write_odds(c.w, *e, OddsForm::Post, market);
  }
  c.w.EndObject();
  c.send(200);
}

}  // namespace

void odds(Call& c) { c.req.method == "POST" ? post_odds(c) : get_odds(c); }

}  // namespace oddsrelay::rest::routes
