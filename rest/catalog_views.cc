#include "rest/catalog_views.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <set>

#include "protocol/api/envelope.h"
#include "protocol/json_out.h"
#include "rest/gzip.h"
#include "rest/vocabulary.h"

namespace oddsrelay::rest {

namespace {

// The tab keys of `sport` that hold market `id`, per phase.
void write_groups(json::Writer& w, const SportTabs* tabs, uint32_t id) {
  w.StartObject();
  for (auto [phase, list] :
       {std::pair{"prematch", tabs ? &tabs->prematch : nullptr}, std::pair{"live", tabs ? &tabs->live : nullptr}}) {
    w.Key(phase);
    w.StartArray();
    if (list)
      for (const CatalogTab& t : *list)
        if (std::find(t.markets.begin(), t.markets.end(), id) != t.markets.end()) json::str(w, t.key);
    w.EndArray();
  }
  w.EndObject();
}

void write_tabs(json::Writer& w, const Catalog& c, const std::vector<CatalogTab>& tabs, int lang) {
  w.StartArray();
  for (const CatalogTab& t : tabs) {
    w.StartObject();
    w.Key("key");
    json::str(w, t.key);
    w.Key("name");
    json::str(w, c.translate(t.name, lang));
    w.Key("markets");
    w.StartArray();
    for (uint32_t m : t.markets) w.Uint(m);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
}

void write_sport_layout(json::Writer& w, const Catalog& c, int32_t sport, int lang, bool echo_lang) {
  const SportTabs* t = c.tabs(sport);
  w.StartObject();
  w.Key("sport");
  w.Int(sport);
  if (echo_lang) {
    w.Key("lang");
    json::str(w, c.languages()[static_cast<size_t>(lang)]);
  }
  w.Key("prematch");
  write_tabs(w, c, t ? t->prematch : std::vector<CatalogTab>{}, lang);
  w.Key("live");
  write_tabs(w, c, t ? t->live : std::vector<CatalogTab>{}, lang);
  w.EndObject();
}

}  // namespace

void CatalogViews::refresh() {
  if (!updates_) return;
  CatalogPtr cur = updates_->load();
  if (cur == catalog_ || !cur) return;
  catalog_ = std::move(cur);
  cache_.clear();  // every encoding names the old catalog's content
}

int CatalogViews::refresh_lang(int lang) {
  refresh();
  // A language index from before a switch may be past the new catalog's list.
  return lang < 0 || static_cast<size_t>(lang) >= catalog_->languages().size() ? 0 : lang;
}

const CatalogViews::Encoded& CatalogViews::finish(std::string key, std::string body) {
  Encoded e;
  std::string z;
  if (body.size() > 1024 && gzip_compress(body, z, 6))
    e.gz = net::make_shared_bytes(std::move(z));  // once: worth the better level
  e.body = net::make_shared_bytes(std::move(body));
  // The catalog's bytes and the query identify the answer.
  std::string seed = std::to_string(catalog_->digest()) + "|" + key;
  char tag[32];
  std::snprintf(tag, sizeof tag, "W/\"%016llx\"",
                static_cast<unsigned long long>(XXH3_64bits(seed.data(), seed.size())));
  e.etag = tag;
  // Any sport id a client names is a key: past the bound (well above the
  // catalog's sports x languages x forms) the cache starts over.
  if (cache_.size() >= kMaxCached) cache_.clear();
  return cache_.insert_or_assign(std::move(key), std::move(e)).first->second;
}

const CatalogViews::Encoded& CatalogViews::markets(std::optional<int32_t> sport, bool nested, bool groups, int lang) {
  lang = refresh_lang(lang);
  // With a sport, nested implies groups and groups implies nested (docs/api.md).
  const bool full = nested || groups, with_groups = sport && full;
  std::string key = "m|" + (sport ? std::to_string(*sport) : std::string("*")) + "|" + (full ? "1" : "0") +
                    (with_groups ? "1" : "0") + "|" + std::to_string(lang);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;

  const Catalog& c = *catalog_;
  const SportTabs* tabs = sport ? c.tabs(*sport) : nullptr;
  std::string body = success_body([&](json::Writer& w) {
    w.Key("data");
    w.StartObject();
    if (sport) {
      w.Key("sport");
      w.Int(*sport);
    }
    w.Key("lang");
    json::str(w, c.languages()[static_cast<size_t>(lang)]);
    std::vector<const CatalogMarket*> ms;
    for (const CatalogMarket& m : c.markets())
      if (!sport || m.in_sport(*sport)) ms.push_back(&m);
    w.Key("markets");
    w.StartObject();
    for (const CatalogMarket* m : ms) {
      json::id_key(w, m->id);
      json::str(w, c.market_name(*m, lang));
    }
    w.EndObject();
    w.Key("codes");
    w.StartObject();
    for (const CatalogMarket* m : ms)
      if (!m->code.empty()) {
        json::id_key(w, m->id);
        json::str(w, m->code);
      }
    w.EndObject();
    std::set<uint32_t> outcome_ids;
    for (const CatalogMarket* m : ms) outcome_ids.insert(m->outcomes.begin(), m->outcomes.end());
    w.Key("outcomes");
    w.StartObject();
    for (uint32_t o : outcome_ids) {
      json::id_key(w, o);
      json::str(w, c.outcome_name(o, lang));
    }
    w.EndObject();
    if (full) {
      w.Key("markets_full");
      w.StartObject();
      for (const CatalogMarket* m : ms) {
        json::id_key(w, m->id);
        w.StartObject();
        w.Key("name");
        json::str(w, c.market_name(*m, lang));
        if (!m->code.empty()) {
          w.Key("code");
          json::str(w, m->code);
        }
        if (with_groups) {
          w.Key("groups");
          write_groups(w, tabs, m->id);
        }
        w.Key("outcomes");
        w.StartObject();
        for (uint32_t o : m->outcomes) {
          json::id_key(w, o);
          json::str(w, c.outcome_name(o, lang));
        }
        w.EndObject();
        w.EndObject();
      }
      w.EndObject();
    }
    w.EndObject();
  });
  return finish(std::move(key), std::move(body));
}

const CatalogViews::Encoded& CatalogViews::market_groups(std::optional<int32_t> sport, int lang, bool echo_lang) {
  lang = refresh_lang(lang);
  std::string key =
      "g|" + (sport ? std::to_string(*sport) : std::string("*")) + "|" + std::to_string(lang) + (echo_lang ? "|l" : "");
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  const Catalog& c = *catalog_;
  std::string body = success_body([&](json::Writer& w) {
    w.Key("data");
    if (sport) {
      write_sport_layout(w, c, *sport, lang, echo_lang);
    } else {
      // Every sport, keyed by sport id (each value as the one-sport answer).
      w.StartObject();
      if (echo_lang) {
        w.Key("lang");
        json::str(w, c.languages()[static_cast<size_t>(lang)]);
      }
      for (int32_t s : c.sports()) {
        json::key(w, std::to_string(s));
        write_sport_layout(w, c, s, lang, false);
      }
      w.EndObject();
    }
  });
  return finish(std::move(key), std::move(body));
}

}  // namespace oddsrelay::rest
