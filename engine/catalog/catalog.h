// The market catalog (the market dictionary of docs/api.md): what every market and
// outcome id means and is called, per sport, in 24 languages, and each
// sport's prematch and live tab layout. Odds payloads carry only ids; this
// is how clients render them and what settlement reads market semantics
// from. Loaded at start (data/catalog.json, built into the binary, or
// --catalog FILE); a Catalog is immutable, so any thread may read it, and a
// reload (engine/catalog/catalog_source.h) publishes a new one beside it.
//
// Names are stored as parts (period, team, stat, family, suffix) and
// composed per language from the translated parts; a part without a
// translation falls back to English. English names are stored whole, in
// natural bookmaker word order.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace oddsrelay {

struct CatalogMarket {
  uint32_t id = 0;
  std::vector<int32_t> sports;  // sorted
  std::string kind;             // semantics for settlement: 1x2, total, handicap_asian, correct_score, btts, ...
  std::string period;           // ft, 1h, 2h, q1.., s1.., i15 (interval from minute 15), ...
  std::string team;             // home, away, or empty
  std::string stat;             // goals, corners, cards, points, ...
  std::string line;             // "total", "handicap" or empty: what the line key's number means
  std::string code;             // raw short code, empty if none
  struct Name {
    std::string period, team, stat, family, suffix, en;
  } name;
  std::vector<uint32_t> outcomes;
  bool in_sport(int32_t sport) const;
};

struct CatalogTab {
  std::string key;   // English machine key, e.g. main_markets
  std::string name;  // English phrase, translated on output
  std::vector<uint32_t> markets;
};

struct SportTabs {
  std::vector<CatalogTab> prematch, live;
};

class Catalog {
 public:
  // Throws std::runtime_error with a one-line reason.
  static std::shared_ptr<const Catalog> parse(std::string_view json);
  static std::shared_ptr<const Catalog> load_file(const std::string& path);
  static std::shared_ptr<const Catalog> builtin();  // data/catalog.json as built into the binary

  const std::string& version() const { return version_; }
  // XXH3 of the bytes it was parsed from: the same file, the same digest
  // (ETags and reloads compare it).
  uint64_t digest() const { return digest_; }
  const std::vector<std::string>& languages() const { return languages_; }
  // Index of a language code in languages(), or -1.
  int lang_index(std::string_view code) const;

  const std::vector<CatalogMarket>& markets() const { return markets_; }  // sorted by id
  const CatalogMarket* market(uint32_t id) const;
  const SportTabs* tabs(int32_t sport) const;
  const std::vector<int32_t>& sports() const { return sports_; }  // with tabs, sorted

  // Translation of an English phrase; the phrase itself when untranslated
  // (or not a phrase at all, like "1X" or "2:1").
  std::string_view translate(std::string_view phrase, int lang) const;
  std::string market_name(const CatalogMarket& m, int lang) const;
  std::string outcome_name(uint32_t outcome, int lang) const;
  // An outcome's English name parts ({"Home"}, {"Home", "Over", "2.5"}), or null.
  const std::vector<std::string>* outcome_parts(uint32_t outcome) const;
  // The label for a market id that is not in the catalog (docs/api.md).
  static std::string fallback_market_label(uint32_t id);

  // Of the phrases names are built from, how many have a translation in
  // `lang` (English counts all).
  struct Coverage {
    size_t phrases = 0, translated = 0;
  };
  Coverage coverage(int lang) const;
  size_t outcome_ids() const { return outcomes_.size(); }

 private:
  std::string version_;
  uint64_t digest_ = 0;
  std::vector<std::string> languages_;
  std::unordered_map<std::string, std::vector<std::string>> vocab_;  // phrase -> text per language ("" = none)
  std::unordered_map<uint32_t, std::vector<std::string>> outcomes_;  // outcome id -> name parts
  std::vector<CatalogMarket> markets_;
  std::unordered_map<uint32_t, size_t> by_id_;
  std::unordered_map<int32_t, SportTabs> tabs_;
  std::vector<int32_t> sports_;
};

using CatalogPtr = std::shared_ptr<const Catalog>;

}  // namespace oddsrelay
