// GET /v1/odds?ids=&at=<unix ms>: the /v1/odds answer as it stood after the
// last record with `at` at or before the given time, rebuilt from the odds
// history (engine/history/book_at.h) and written by the same encoder as the
// live answer, so that it is byte-equal to what /v1/odds answered at that
// seq, plus that `seq` and the `epoch` (docs/api.md "The book at a
// moment"), and with digest=1 the digest of its outcomes at that seq. Not
// cached: each moment is asked for once.
#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <unordered_set>
#include <vector>

#include "engine/core/odds_digest.h"
#include "engine/history/book_at.h"
#include "engine/views/json_views.h"
#include "protocol/api/errors.h"
#include "protocol/event_id.h"
#include "rest/api/handlers.h"
#include "rest/api/odds_parts.h"
#include "rest/params.h"

namespace oddsrelay::rest::routes {

void odds_at(Call& c, std::string_view at_text) {
  const auto at = parse_int(at_text);
  if (!at) return c.error(400, err::kBadOddsAt);
  if (!c.api.inputs.history) return c.error(400, err::kOddsAtNoHistory);
  if (history_loading(c)) return;
  const bool with_digest = c.param("digest").value_or("") == "1";
  const std::vector<std::string> ids = split_ids(c.param("ids").value_or(""));
  if (ids.empty()) return c.error(400, err::kMissingIds);
  if (ids.size() > kMaxIds) return c.error(400, err::kTooManyIds);
  std::vector<uint64_t> numbers;  // every valid id's, for the lock; resolved in order below
  for (const std::string& id : ids)
    if (const ParsedId p = parse_event_id(id); p.ok()) numbers.push_back(p.number);
  c.api.inputs.history->read_many(
      numbers, [&](const std::vector<const history::EventHistory*>& hs, const history::HeldState& st) {
        const uint64_t seq = c.api.inputs.history->seq_at(*at);
        if (st.held_from_seq && seq < st.held_from_seq) return refuse_horizon(c, st.held_from);
        // As resolve_ids and get_odds do: the events known at `seq`, each once,
        // in the order asked; ids that named none, as asked; then the known
        // events with neither a listing nor markets, by their id.
        std::vector<std::pair<const history::EventHistory*, uint64_t>> events;
        std::vector<std::string> missing;
        std::unordered_set<uint64_t> seen;
        size_t valid = 0;
        for (const std::string& id : ids) {
          const ParsedId p = parse_event_id(id);
          const history::EventHistory* h = p.ok() ? hs[valid++] : nullptr;
          const bool known = h && h->first_seq() != 0 && h->first_seq() <= seq;
          if (known && seen.insert(p.number).second) events.emplace_back(h, p.number);
          if (!known && std::find(missing.begin(), missing.end(), id) == missing.end()) missing.push_back(id);
        }
        std::string& b = c.body;
        b = "{\"success\":true,\"seq\":" + std::to_string(seq) + ",\"epoch\":";
        {
          json::StringSink sink(b);
          json::Writer w(sink);
          json::str(w, st.epoch);
        }
        b += ",\"data\":{";
        bool first = true;
        uint64_t digest = 0;  // digest=1: the answer's outcomes, as /v1/odds sums them
        for (const auto& [h, number] : events) {
          EventEntry e;
          e.number = number;
          e.key = h->key();
          e.markets = history::book_at(*h, seq);
          if (!h->listed_at(seq) && e.markets.empty()) {
            missing.push_back(e.key);
            continue;
          }
          if (!first) b += ',';
          first = false;
          // Event ids need no escaping: they parsed as ids (rest/odds_cache.cc).
          b.append("\"").append(e.key).append("\":");
          json::StringSink sink(b);
          json::Writer w(sink);
          write_odds(w, e, OddsForm::Get);
          // The rebuilt markets carry no kept sum (book_at makes them): hashed here.
          if (with_digest)
            for (const MarketRef& m : e.markets) digest += market_digest(number, *m);
        }
        b += not_found_tail(missing);
        if (with_digest) {
          b.pop_back();  // the closing brace
          b += ",\"digest\":\"" + digest_hex(digest) + "\"}";
        }
        // A weak tag of the bytes, as /v1/odds carries one (a moment's answer never changes).
        char etag[64];
        std::snprintf(etag, sizeof etag, "ETag: W/\"%016llx\"\r\nCache-Control: no-cache\r\n",
                      static_cast<unsigned long long>(XXH3_64bits(b.data(), b.size())));
        c.send(200, etag);
      });
}

}  // namespace oddsrelay::rest::routes
