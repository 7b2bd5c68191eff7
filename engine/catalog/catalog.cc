#include "engine/catalog/catalog.h"

#include <rapidjson/document.h>
#include <xxhash.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "protocol/json_in.h"

namespace oddsrelay {

namespace {

using rapidjson::Value;

[[noreturn]] void bad(const std::string& what) { throw std::runtime_error("catalog: " + what); }

std::string str_or_empty(const Value& o, const char* k) {
  if (!o.HasMember(k) || o[k].IsNull()) return {};
  if (o[k].IsString()) return std::string(o[k].GetString(), o[k].GetStringLength());
  if (o[k].IsInt64()) return std::to_string(o[k].GetInt64());
  bad(std::string("field '") + k + "' is not a string");
}

const Value& member(const Value& o, const char* k, const std::string& where) {
  if (!o.IsObject() || !o.HasMember(k)) bad(where + " has no '" + k + "'");
  return o[k];
}

// Every shape is checked before it is read: a file given at start or on a
// reload is untrusted, and RapidJSON's accessors assume the type.
const Value& array_of(const Value& o, const char* k, const std::string& where) {
  const Value& v = member(o, k, where);
  if (!v.IsArray()) bad(where + ": '" + k + "' is not an array");
  return v;
}

const Value& object_of(const Value& o, const char* k, const std::string& where) {
  const Value& v = member(o, k, where);
  if (!v.IsObject()) bad(where + ": '" + k + "' is not an object");
  return v;
}

uint32_t id_of(const Value& v, const std::string& what) {
  if (!v.IsUint() || v.GetUint() == 0) bad(what + " is not a positive integer");
  return v.GetUint();
}

// An object key that must be a positive decimal id ("2001", "19").
uint32_t key_id(const Value& k, const std::string& what) {
  std::string_view s(k.GetString(), k.GetStringLength());
  uint64_t n = 0;
  if (s.empty() || s.size() > 9) bad(what + " '" + std::string(s) + "' is not an id");
  for (char ch : s) {
    if (ch < '0' || ch > '9') bad(what + " '" + std::string(s) + "' is not an id");
    n = n * 10 + static_cast<uint64_t>(ch - '0');
  }
  if (n == 0) bad(what + " '" + std::string(s) + "' is not an id");
  return static_cast<uint32_t>(n);
}

}  // namespace

bool CatalogMarket::in_sport(int32_t sport) const { return std::binary_search(sports.begin(), sports.end(), sport); }

std::shared_ptr<const Catalog> Catalog::parse(std::string_view json) {
  rapidjson::Document d;
  if (const json::InResult parsed = json::parse(json, d, json::kFileLimits); !parsed)
    bad(parsed.over_limit() ? "refused: " + parsed.message(json::kFileLimits)
                            : "not valid JSON: " + parsed.detail + " at offset " + std::to_string(parsed.offset));
  if (!d.IsObject()) bad("the top level is not an object");
  auto c = std::make_shared<Catalog>();
  c->digest_ = XXH3_64bits(json.data(), json.size());
  const Value& version = member(d, "version", "the catalog");
  if (!version.IsString()) bad("version is not a string");
  c->version_ = version.GetString();
  const Value& langs = member(d, "languages", "the catalog");
  if (!langs.IsArray() || langs.Empty() || !langs[0].IsString() || std::string_view(langs[0].GetString()) != "en")
    bad("languages must be an array starting with \"en\"");
  for (const auto& l : langs.GetArray()) {
    if (!l.IsString()) bad("languages has a non-string");
    c->languages_.emplace_back(l.GetString());
  }
  for (const auto& [k, v] : object_of(d, "vocabulary", "the catalog").GetObject()) {
    if (!v.IsObject()) bad(std::string("vocabulary entry '") + k.GetString() + "' is not an object");
    std::vector<std::string> row(c->languages_.size());
    row[0] = k.GetString();
    for (const auto& [lang, text] : v.GetObject()) {
      int i = c->lang_index(lang.GetString());
      if (i > 0 && text.IsString()) row[static_cast<size_t>(i)] = text.GetString();
    }
    c->vocab_.emplace(k.GetString(), std::move(row));
  }
  for (const auto& [k, v] : object_of(d, "outcomes", "the catalog").GetObject()) {
    const uint32_t id = key_id(k, "outcome id");
    if (!v.IsArray() || v.Empty()) bad("outcome " + std::to_string(id) + " has no name parts");
    std::vector<std::string> parts;
    for (const auto& p : v.GetArray()) {
      if (!p.IsString()) bad("outcome " + std::to_string(id) + " has a name part that is not a string");
      parts.emplace_back(p.GetString());
    }
    if (!c->outcomes_.emplace(id, std::move(parts)).second) bad("outcome id " + std::to_string(id) + " twice");
  }
  const Value& markets = array_of(d, "markets", "the catalog");
  if (markets.Empty()) bad("markets is empty");
  // A market is some 500 bytes of strings; growing the array moved each
  // one again at every doubling (a fifth of the server's start-up).
  c->markets_.reserve(markets.Size());
  for (const auto& mv : markets.GetArray()) {
    if (!mv.IsObject()) bad("a market is not an object");
    CatalogMarket m;
    m.id = id_of(member(mv, "id", "a market"), "a market id");
    const std::string where = "market " + std::to_string(m.id);
    for (const auto& s : array_of(mv, "sports", where).GetArray()) {
      if (!s.IsInt() || s.GetInt() <= 0) bad(where + " has a sport that is not a positive integer");
      m.sports.push_back(s.GetInt());
    }
    if (m.sports.empty()) bad(where + " has no sport");
    std::sort(m.sports.begin(), m.sports.end());
    m.kind = str_or_empty(mv, "kind");
    m.period = str_or_empty(mv, "period");
    m.team = str_or_empty(mv, "team");
    m.stat = str_or_empty(mv, "stat");
    m.line = str_or_empty(mv, "line");
    m.code = str_or_empty(mv, "code");
    const Value& n = object_of(mv, "name", where);
    m.name = {str_or_empty(n, "period"), str_or_empty(n, "team"),   str_or_empty(n, "stat"),
              str_or_empty(n, "family"), str_or_empty(n, "suffix"), str_or_empty(n, "en")};
    if (m.name.en.empty()) bad(where + " has no English name");
    for (const auto& o : array_of(mv, "outcomes", where).GetArray()) {
      const uint32_t oid = id_of(o, where + "'s outcome");
      if (!c->outcomes_.count(oid)) bad(where + " names an unknown outcome " + std::to_string(oid));
      m.outcomes.push_back(oid);
    }
    if (m.outcomes.empty()) bad(where + " has no outcomes");
    if (!c->by_id_.emplace(m.id, c->markets_.size()).second) bad("market id " + std::to_string(m.id) + " twice");
    c->markets_.push_back(std::move(m));
  }
  // The file lists them by id already; sorting it again moved them anyway.
  auto by_id = [](const CatalogMarket& a, const CatalogMarket& b) { return a.id < b.id; };
  if (!std::is_sorted(c->markets_.begin(), c->markets_.end(), by_id))
    std::sort(c->markets_.begin(), c->markets_.end(), by_id);
  for (size_t i = 0; i < c->markets_.size(); ++i) c->by_id_[c->markets_[i].id] = i;
  for (const auto& [k, v] : object_of(d, "tabs", "the catalog").GetObject()) {
    const int32_t sport = static_cast<int32_t>(key_id(k, "tab sport"));
    const std::string where = "tabs of sport " + std::to_string(sport);
    SportTabs t;
    for (auto [phase, out] : {std::pair{"prematch", &t.prematch}, std::pair{"live", &t.live}}) {
      for (const auto& tv : array_of(v, phase, where).GetArray()) {
        if (!tv.IsObject()) bad(where + ": a tab is not an object");
        CatalogTab tab{str_or_empty(tv, "key"), str_or_empty(tv, "name"), {}};
        if (tab.key.empty()) bad(where + ": a tab has no key");
        for (const auto& mid : array_of(tv, "markets", "tab " + tab.key).GetArray()) {
          const uint32_t id = id_of(mid, "a market of tab " + tab.key);
          if (!c->market(id)) bad("tab " + tab.key + " names an unknown market " + std::to_string(id));
          tab.markets.push_back(id);
        }
        out->push_back(std::move(tab));
      }
    }
    c->tabs_.emplace(sport, std::move(t));
    c->sports_.push_back(sport);
  }
  std::sort(c->sports_.begin(), c->sports_.end());
  return c;
}

std::shared_ptr<const Catalog> Catalog::load_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) bad("cannot read " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  return parse(ss.str());
}

int Catalog::lang_index(std::string_view code) const {
  for (size_t i = 0; i < languages_.size(); ++i)
    if (languages_[i] == code) return static_cast<int>(i);
  return -1;
}

const CatalogMarket* Catalog::market(uint32_t id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &markets_[it->second];
}

const SportTabs* Catalog::tabs(int32_t sport) const {
  auto it = tabs_.find(sport);
  return it == tabs_.end() ? nullptr : &it->second;
}

std::string_view Catalog::translate(std::string_view phrase, int lang) const {
  if (lang <= 0 || static_cast<size_t>(lang) >= languages_.size() || phrase.empty()) return phrase;
  auto it = vocab_.find(std::string(phrase));
  if (it == vocab_.end() || it->second[static_cast<size_t>(lang)].empty()) return phrase;
  return it->second[static_cast<size_t>(lang)];
}

std::string Catalog::market_name(const CatalogMarket& m, int lang) const {
  if (lang <= 0 || static_cast<size_t>(lang) >= languages_.size()) return m.name.en;
  // Other languages: "<period> - <team> - <stat> - <family> <suffix>", each
  // part translated; English word order would not survive translation.
  std::string out;
  auto add = [&](std::string_view part) {
    if (part.empty()) return;
    if (!out.empty()) out += " - ";
    out += translate(part, lang);
  };
  add(m.name.period);
  add(m.name.team);
  add(m.name.stat);
  add(m.name.family);
  if (!m.name.suffix.empty()) {
    out += ' ';
    out += m.name.suffix;
  }
  return out;
}

std::string Catalog::outcome_name(uint32_t outcome, int lang) const {
  auto it = outcomes_.find(outcome);
  if (it == outcomes_.end()) return "Outcome " + std::to_string(outcome);
  std::string out;
  for (const auto& p : it->second) {
    if (!out.empty()) out += " & ";
    out += translate(p, lang);
  }
  return out;
}

const std::vector<std::string>* Catalog::outcome_parts(uint32_t outcome) const {
  auto it = outcomes_.find(outcome);
  return it == outcomes_.end() ? nullptr : &it->second;
}

std::string Catalog::fallback_market_label(uint32_t id) { return "Market " + std::to_string(id); }

Catalog::Coverage Catalog::coverage(int lang) const {
  std::set<std::string> used;
  for (const auto& m : markets_)
    for (const std::string* p : {&m.name.period, &m.name.team, &m.name.stat, &m.name.family})
      if (!p->empty()) used.insert(*p);
  for (const auto& [id, parts] : outcomes_)
    for (const auto& p : parts) used.insert(p);
  for (const auto& [sport, t] : tabs_)
    for (const auto* v : {&t.prematch, &t.live})
      for (const auto& tab : *v) used.insert(tab.name);
  Coverage c;
  for (const auto& p : used) {
    auto it = vocab_.find(p);
    // Words without letters ("1X", "2:1", "00:00-14:59") read the same everywhere.
    bool words = std::any_of(p.begin(), p.end(), [](char ch) { return std::isalpha(static_cast<unsigned char>(ch)); });
    if (!words && it == vocab_.end()) continue;
    ++c.phrases;
    if (lang == 0 || (it != vocab_.end() && lang > 0 && !it->second[static_cast<size_t>(lang)].empty())) ++c.translated;
  }
  return c;
}

}  // namespace oddsrelay
