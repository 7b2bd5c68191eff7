// The stream add-on's two routes: GET /v1/stream?id= signs a player URL for
// a live event with coverage; GET /stream/play checks such a URL (no API
// key: the signature is the credential).
#include <algorithm>
#include <cstdio>

#include "protocol/api/errors.h"
#include "protocol/clock.h"
#include "rest/api/handlers.h"
#include "rest/params.h"

namespace oddsrelay::rest::routes {

void stream_url(Call& c) {
  const StreamOptions& o = c.api.inputs.stream;
  auto id = c.param("id");
  if (!id || id->empty()) return c.error(400, err::kMissingId);
  const EventEntry* e = lookup(*c.snap, *id);
  if (!e || !e->listed()) return c.error(404, err::kEventNotFound);
  if (!e->live() || std::find(o.sports.begin(), o.sports.end(), e->sport()) == o.sports.end())
    return c.error(404, err::kNoStreamCoverage);
  char key_id[17];
  for (int i = 0; i < 8; ++i) std::snprintf(key_id + 2 * i, 3, "%02x", c.key->digest[static_cast<size_t>(i)]);
  const int64_t exp = wall_ms() / 1000 + o.ttl_s;
  const std::string sig = c.api.stream_signer.sign(e->key, key_id, exp);
  std::string url = stream_base(c.api.inputs.public_url, c.req.header("Host")) + "/stream/play?event=" + e->key +
                    "&key=" + key_id + "&exp=" + std::to_string(exp) + "&sig=" + sig;
  c.begin_success();
  c.w.Key("data");
  c.w.StartObject();
  c.w.Key("event_id");
  json::str(c.w, e->key);
  c.w.Key("url");
  json::str(c.w, url);
  c.w.Key("expires_at");
  c.w.Int64(exp);
  c.w.Key("format");
  c.w.String("hls");
  c.w.EndObject();
  c.w.EndObject();
  c.send(200);
}

void stream_play(Call& c) {
  auto event = c.param("event"), key = c.param("key"), exp = c.param("exp"), sig = c.param("sig");
  auto e = exp ? parse_int(*exp) : std::nullopt;
  if (!event || !key || !e || !sig) return c.error(403, err::kBadStreamSignature);
  switch (c.api.stream_signer.verify(*event, *key, *e, *sig, wall_ms() / 1000)) {
    case StreamSigner::Check::BadSignature:
      return c.error(403, err::kBadStreamSignature);
    case StreamSigner::Check::Expired:
      return c.error(403, err::kStreamExpired);
    case StreamSigner::Check::Ok:
      break;
  }
  c.begin_success();
  c.w.Key("event_id");
  json::str(c.w, *event);
  c.w.Key("playlist");
  json::str(c.w, "/stream/" + *event + "/index.m3u8");
  c.w.EndObject();
  c.send(200);
}

}  // namespace oddsrelay::rest::routes
