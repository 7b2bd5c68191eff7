#include "rest/settlement_views.h"

#include "engine/settlement/settlement.h"

namespace oddsrelay::rest {

namespace {

void write_record(json::Writer& w, const EventEntry& e, const Settlement& s, const Catalog& c, int lang) {
  w.StartObject();
  w.Key("fixture_id");
  json::str(w, e.key);
  w.Key("status");
  w.String(feed::status_name(s.status));
  if (s.status == feed::ScoreStatus::Ended) {
    w.Key("result");
    w.String(s.result == feed::MatchResult::None ? "completed" : feed::result_name(s.result));
  }
  w.Key("score");
  if (s.score)
    json::home_away(w, s.score->first, s.score->second);
  else
    w.Null();
  w.Key("settled_at");
  w.Int64(s.settled_at);
  w.Key("revision");  // 1 at the first final score, +1 per correction; 0 before
  w.Uint(s.final_version);
  w.Key("mode");
  w.String(s.inplay ? "inplay" : "final");
  w.Key("coverage");
  w.StartObject();
  w.Key("covered");
  w.Uint(s.covered);
  w.Key("void");
  w.Uint(s.voided);
  w.Key("pending");
  w.Uint(s.pending);
  w.Key("markets");
  w.Uint(static_cast<unsigned>(s.markets.size()));
  w.EndObject();
  w.Key("markets");
  w.StartObject();
  for (const MarketSettlement& m : s.markets) {
    json::id_key(w, m.market);
    w.StartObject();
    w.Key("name");
    const CatalogMarket* cm = c.market(m.market);
    json::str(w, cm ? c.market_name(*cm, lang) : Catalog::fallback_market_label(m.market));
    w.Key("lines");
    w.StartObject();
    for (const LineSettlement& l : m.lines) {
      json::key(w, l.key);
      w.StartObject();
      w.Key("line");
      if (l.line.empty())
        w.Null();
      else
        json::str(w, l.line);
      if (l.withdrawn) {  // settled on the read when it was withdrawn
        w.Key("withdrawn");
        w.Bool(true);
        w.Key("last_read");
        w.Int64(l.last_read);
      }
      w.Key("outcomes");
      w.StartObject();
      for (const OutcomeSettlement& o : l.outcomes) {
        json::id_key(w, o.outcome);
        w.StartObject();
        w.Key("name");
        json::str(w, c.outcome_name(o.outcome, lang));
        w.Key("result");
        w.String(settle_result_name(o.result));
        if (o.reason) {
          w.Key("reason");
          w.String(o.reason);
        }
        w.EndObject();
      }
      w.EndObject();
      w.EndObject();
    }
    w.EndObject();
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
}

}  // namespace

const std::string& SettlementCache::get(const std::shared_ptr<const EventEntry>& e, const Catalog& catalog, int lang,
                                        bool include_inplay) {
  served_.add();
  if (catalog.digest() != catalog_digest_) {
    slots_.clear();
    catalog_digest_ = catalog.digest();
  }
  const Key k{e->number, lang, include_inplay};
  const bool ended = e->score && e->score->ended;
  auto it = slots_.find(k);
  if (it != slots_.end()) {
    const Slot& s = it->second;
    // Once ended, the answer rests on the final score alone (and the odds
    // frozen at full time): it changes only with a correction.
    const bool fresh =
        ended ? s.ended && s.final_version == e->score->final_version && s.key == e->key : !s.ended && s.version == e;
    if (fresh) return s.json;
  } else {
    if (slots_.size() >= kMaxEntries) slots_.clear();
    it = slots_.emplace(k, Slot{}).first;
  }
  computed_.add();
  Slot& s = it->second;
  s.ended = ended;
  s.final_version = ended ? e->score->final_version : 0;
  s.version = ended ? nullptr : e;
  s.key = e->key;
  s.json.clear();
  json::StringSink sink(s.json);
  json::Writer w(sink);
  write_record(w, *e, settle(*e, catalog, include_inplay), catalog, lang);
  return s.json;
}

}  // namespace oddsrelay::rest
