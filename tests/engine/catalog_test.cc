// The built-in market catalog: the interface's ids with their meanings and
// outcomes, its exact size (markets, per-market outcome ids, sports), tabs
// that name real markets, names composed per language with English
// fallback; the loader's checks (a bad file is refused with one line, never
// a crash); and CatalogSource's reloads (unchanged, replaced, bad file kept).
#include "engine/catalog/catalog.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

#include "engine/catalog/catalog_source.h"
#include "engine/sources/sim_catalog.h"
#include "engine/sources/sim_pricing.h"
#include "tests/test_util.h"

namespace oddsrelay {
namespace {

const Catalog& cat() { return *Catalog::builtin(); }

TEST(Catalog, HasEverySpecMarketWithItsMeaning) {
  struct Want {
    uint32_t id;
    const char* kind;
    std::set<uint32_t> outcomes;
  };
  const Want wants[] = {
      {1001, "1x2", {2001, 2002, 2003}},
      {1004, "correct_score", {2004, 2005}},
      {1005, "handicap_asian", {2006, 2007}},
      {1007, "total", {2008, 2009}},
      {1009, "dnb", {2010, 2011}},
      {1011, "handicap_asian", {2012, 2013}},
      {1012, "correct_score", {2014, 2015}},
      {1018, "total", {2016, 2017}},
      {1019, "btts", {2018, 2019}},
      {1054, "handicap_asian", {2020, 2021}},
      {1080, "total", {2022, 2023}},
      {1128, "corners_total", {2024, 2025}},
  };
  for (const Want& w : wants) {
    const CatalogMarket* m = cat().market(w.id);
    ASSERT_NE(m, nullptr) << w.id;
    EXPECT_EQ(m->kind, w.kind) << w.id;
    EXPECT_EQ(std::set<uint32_t>(m->outcomes.begin(), m->outcomes.end()), w.outcomes) << w.id;
  }
  EXPECT_EQ(cat().market(1054)->period, "1h");
  EXPECT_EQ(cat().market(1007)->line, "total");
  EXPECT_EQ(cat().market(1005)->line, "handicap");
  EXPECT_EQ(cat().outcome_name(2001, 0), "Home");
  EXPECT_EQ(cat().outcome_name(2002, 0), "Draw");
  EXPECT_EQ(cat().outcome_name(2003, 0), "Away");
}

// The interface: 4,873 markets and 17,227 outcomes across 25 sports, about
// 720 with a raw code, about 550 for soccer.
TEST(Catalog, SizeOfTheInterfacesCatalog) {
  const auto& ms = cat().markets();
  EXPECT_EQ(ms.size(), 4873u);
  EXPECT_EQ(cat().outcome_ids(), 17227u);
  EXPECT_EQ(cat().sports().size(), 25u);
  std::set<int32_t> in_markets;
  for (const auto& m : ms) in_markets.insert(m.sports.begin(), m.sports.end());
  EXPECT_EQ(in_markets, std::set<int32_t>(cat().sports().begin(), cat().sports().end()));
  EXPECT_TRUE(in_markets.count(19));  // snooker, the 25th
}

// Outcome ids are per market: each id belongs to one market, numbered from
// 2001 in market id order (so 1001 has 2001/2002/2003), none left over.
TEST(Catalog, OutcomeIdsArePerMarket) {
  std::map<uint32_t, uint32_t> owner;
  uint32_t next = 2001;
  for (const auto& m : cat().markets())
    for (uint32_t o : m.outcomes) {
      EXPECT_TRUE(owner.emplace(o, m.id).second) << "outcome " << o << " in " << owner[o] << " and " << m.id;
      EXPECT_EQ(o, next) << "market " << m.id;
      next = o + 1;
      EXPECT_NE(cat().outcome_parts(o), nullptr) << o;
    }
  EXPECT_EQ(owner.size(), cat().outcome_ids());
  EXPECT_EQ(next, 2001u + 17227u);
}

// The simulator prices the interface's markets with the catalog's ids and
// meanings (engine/sources/sim_catalog.cc).
TEST(Catalog, SimulatorOutcomeIdsAreTheCatalogs) {
  const std::map<uint32_t, std::vector<std::string>> names = {
      {1001, {"Home", "Draw", "Away"}}, {1004, {"Score", "Other"}}, {1005, {"Home", "Away"}},
      {1007, {"Over", "Under"}},        {1009, {"Home", "Away"}},   {1011, {"Home", "Away"}},
      {1012, {"Score", "Other"}},       {1018, {"Over", "Under"}},  {1019, {"Yes", "No"}},
      {1054, {"Home", "Away"}},         {1080, {"Over", "Under"}},  {1128, {"Over", "Under"}}};
  for (const auto& [id, want] : names) {
    const CatalogMarket* m = cat().market(id);
    ASSERT_NE(m, nullptr) << id;
    ASSERT_EQ(m->outcomes.size(), want.size()) << id;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(m->outcomes[i], sim::first_outcome(id) + i) << id;
      EXPECT_EQ(cat().outcome_name(m->outcomes[i], 0), want[i]) << id;
    }
  }
  EXPECT_EQ(sim::first_outcome(4242), 0u);
}

// Every market the simulator prices, for every sport it draws, live and
// prematch, is a catalog market of that sport, and every outcome id it
// prices is one of that market's.
TEST(Catalog, SimulatorPricesOnlyCatalogOutcomesOfTheMarket) {
  size_t priced = 0;
  for (const sim::SportDef& s : sim::sports()) {
    sim::MatchState m;
    m.sport = &s;
    m.home = 1;
    m.remaining = 0.5;
    sim::Pricer p(m);
    for (bool live : {false, true})
      for (uint32_t id : sim::markets_for(s, live, true)) {
        const CatalogMarket* cm = cat().market(id);
        ASSERT_NE(cm, nullptr) << id;
        EXPECT_TRUE(cm->in_sport(s.id)) << id << " in sport " << s.id;
        for (const auto& o : sim::price_market(id, m, p, false).outcomes) {
          EXPECT_NE(std::find(cm->outcomes.begin(), cm->outcomes.end(), o.id), cm->outcomes.end())
              << "sport " << s.id << " market " << id << " outcome " << o.id;
          ++priced;
        }
      }
  }
  EXPECT_GT(priced, 500u);
}

TEST(Catalog, SizeAndShapeLikeTheRealService) {
  const auto& ms = cat().markets();
  size_t pairs = 0, coded = 0, soccer = 0;
  for (const auto& m : ms) {
    pairs += m.outcomes.size();
    coded += !m.code.empty();
    soccer += m.in_sport(1);
    EXPECT_FALSE(m.name.en.empty());
    EXPECT_FALSE(m.sports.empty());
  }
  EXPECT_EQ(pairs, 17227u);
  EXPECT_GT(coded, 690u);  // about 720
  EXPECT_LT(coded, 750u);
  EXPECT_GT(soccer, 520u);  // about 550
  EXPECT_LT(soccer, 580u);
  EXPECT_EQ(cat().languages().size(), 24u);
}

TEST(Catalog, EveryTabNamesExistingMarketsOfItsSport) {
  for (int32_t sport : cat().sports()) {
    const SportTabs* t = cat().tabs(sport);
    ASSERT_NE(t, nullptr);
    EXPECT_FALSE(t->prematch.empty());
    for (const auto* list : {&t->prematch, &t->live})
      for (const CatalogTab& tab : *list)
        for (uint32_t id : tab.markets) {
          const CatalogMarket* m = cat().market(id);
          ASSERT_NE(m, nullptr) << tab.key;
          EXPECT_TRUE(m->in_sport(sport)) << id << " in " << tab.key << " of " << sport;
        }
  }
  EXPECT_EQ(cat().tabs(1)->prematch.size(), 13u);  // the interface: soccer has 13 prematch tabs
  std::set<std::string> keys;
  for (const CatalogTab& tab : cat().tabs(1)->prematch) keys.insert(tab.key);
  for (const char* k : {"main_markets", "goal_markets", "period_markets", "team_markets", "interval_markets"})
    EXPECT_TRUE(keys.count(k)) << k;
}

TEST(Catalog, NamesComposeFromTranslatedParts) {
  const int de = cat().lang_index("de"), zh = cat().lang_index("zh");
  ASSERT_GT(de, 0);
  EXPECT_EQ(cat().market_name(*cat().market(1054), 0), "1st Half - Asian Handicap");
  EXPECT_EQ(cat().market_name(*cat().market(1054), de), "1. Halbzeit - Asiatisches Handicap");
  EXPECT_EQ(cat().market_name(*cat().market(1128), de), "Ecken - Gesamt");
  EXPECT_EQ(cat().outcome_name(2001, de), "Heim");
  EXPECT_EQ(cat().outcome_name(2008, zh), "大");  // 1007's Over
  // A combination outcome translates each part.
  bool found = false;
  for (const auto& m : cat().markets())
    if (m.kind == "htft") {
      EXPECT_EQ(cat().outcome_name(m.outcomes[0], 0), "Home & Home");
      EXPECT_EQ(cat().outcome_name(m.outcomes[0], de), "Heim & Heim");
      found = true;
      break;
    }
  EXPECT_TRUE(found);
}

TEST(Catalog, UntranslatedPhrasesFallBackToEnglish) {
  const int de = cat().lang_index("de");
  EXPECT_EQ(cat().translate("Throw-ins", de), "Throw-ins");  // no German in the vocabulary
  EXPECT_EQ(cat().translate("1X", de), "1X");
  EXPECT_EQ(cat().lang_index("xx"), -1);
  EXPECT_EQ(cat().translate("Home", -1), "Home");
  for (size_t l = 0; l < cat().languages().size(); ++l) {
    auto c = cat().coverage(static_cast<int>(l));
    EXPECT_GT(c.translated * 10, c.phrases * 5) << cat().languages()[l];  // over half translated everywhere
    EXPECT_NE(cat().outcome_name(2001, static_cast<int>(l)), l == 0 ? "" : "Home") << cat().languages()[l];
  }
  EXPECT_EQ(Catalog::fallback_market_label(987654), "Market 987654");
  EXPECT_EQ(cat().market(987654), nullptr);
}

// The built-in file lists its markets by id and is not sorted again; a file
// that does not is, and every market is found by its id either way.
TEST(Catalog, MarketsAreByIdWhateverOrderTheFileListsThem) {
  auto c = Catalog::parse(
      R"({"version":"t","languages":["en"],"vocabulary":{},"outcomes":{"1":["Yes"]},"markets":[)"
      R"({"id":9,"sports":[1],"name":{"en":"Nine"},"outcomes":[1]},{"id":3,"sports":[1],"name":{"en":"Three"},"outcomes":[1]},)"
      R"({"id":5,"sports":[2,1],"name":{"en":"Five"},"outcomes":[1]}],"tabs":{}})");
  std::vector<uint32_t> ids;
  for (const CatalogMarket& m : c->markets()) ids.push_back(m.id);
  EXPECT_EQ(ids, (std::vector<uint32_t>{3, 5, 9}));
  for (uint32_t id : {3u, 5u, 9u}) {
    ASSERT_NE(c->market(id), nullptr) << id;
    EXPECT_EQ(c->market(id)->id, id);
  }
  EXPECT_EQ(c->market(5)->sports, (std::vector<int32_t>{1, 2}));
  EXPECT_TRUE(std::is_sorted(cat().markets().begin(), cat().markets().end(),
                             [](const CatalogMarket& a, const CatalogMarket& b) { return a.id < b.id; }));
}

TEST(Catalog, BadFilesAreRefusedWithAReason) {
  auto reason = [](const std::string& json) {
    try {
      Catalog::parse(json);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(reason("{").find("not valid JSON"), std::string::npos);
  EXPECT_NE(reason(std::string(300'000, '[')).find("refused: nested deeper than 64 levels"), std::string::npos);
  EXPECT_NE(reason("{}").find("version"), std::string::npos);
  EXPECT_NE(reason(R"({"version":"x","languages":["de"]})").find("languages"), std::string::npos);
  const std::string base = R"({"version":"t","languages":["en","de"],"vocabulary":{},"outcomes":{"1":["Yes"]},)";
  EXPECT_NE(reason(base + R"("markets":[{"id":5,"sports":[1],"name":{"en":"X"},"outcomes":[2]}],"tabs":{}})")
                .find("unknown outcome"),
            std::string::npos);
  const std::string one = R"("markets":[{"id":5,"sports":[1],"name":{"en":"X"},"outcomes":[1]}],)";
  EXPECT_NE(reason(base + one + R"("tabs":{"1":{"prematch":[{"key":"k","name":"K","markets":[9]}],"live":[]}}})")
                .find("unknown market"),
            std::string::npos);
  // Wrong shapes are refused with a reason, never read as something else.
  const std::pair<std::string, const char*> shapes[] = {
      {base + R"("markets":[],"tabs":{}})", "markets is empty"},
      {base + R"("markets":{},"tabs":{}})", "'markets' is not an array"},
      {base + R"("markets":[7],"tabs":{}})", "a market is not an object"},
      {base + R"("markets":[{"id":5,"sports":1,"name":{"en":"X"},"outcomes":[1]}],"tabs":{}})",
       "'sports' is not an array"},
      {base + R"("markets":[{"id":5,"sports":["1"],"name":{"en":"X"},"outcomes":[1]}],"tabs":{}})",
       "sport that is not"},
      {base + R"("markets":[{"id":5,"sports":[],"name":{"en":"X"},"outcomes":[1]}],"tabs":{}})", "has no sport"},
      {base + R"("markets":[{"id":5,"sports":[1],"name":"X","outcomes":[1]}],"tabs":{}})", "'name' is not an object"},
      {base + R"("markets":[{"id":5,"sports":[1],"name":{"en":"X"},"outcomes":["1"]}],"tabs":{}})",
       "outcome is not a positive"},
      {base + R"("markets":[{"id":5,"sports":[1],"name":{"en":"X"},"outcomes":[]}],"tabs":{}})", "has no outcomes"},
      {base + R"("markets":[{"id":-5,"sports":[1],"name":{"en":"X"},"outcomes":[1]}],"tabs":{}})", "market id is not"},
      {base + one.substr(0, one.size() - 2) + R"(,{"id":5,"sports":[2],"name":{"en":"Y"},"outcomes":[1]}],"tabs":{}})",
       "market id 5 twice"},
      {base + one + R"("tabs":[]})", "'tabs' is not an object"},
      {base + one + R"("tabs":{"soccer":{"prematch":[],"live":[]}}})", "tab sport 'soccer' is not an id"},
      {base + one + R"("tabs":{"1":{"prematch":{},"live":[]}}})", "'prematch' is not an array"},
      {base + one + R"("tabs":{"1":{"prematch":[{"name":"K","markets":[5]}],"live":[]}}})", "a tab has no key"},
      {base + one + R"("tabs":{"1":{"prematch":[{"key":"k","markets":[true]}],"live":[]}}})", "a market of tab k"},
      {R"({"version":"t","languages":["en"],"vocabulary":[],"outcomes":{},"markets":[],"tabs":{}})",
       "'vocabulary' is not an object"},
      {R"({"version":"t","languages":["en"],"vocabulary":{},"outcomes":{"x1":["A"]},"markets":[],"tabs":{}})",
       "outcome id 'x1' is not an id"},
      {R"({"version":"t","languages":["en"],"vocabulary":{},"outcomes":{"1":[2]},"markets":[],"tabs":{}})",
       "not a string"},
  };
  for (const auto& [json, why] : shapes) {
    const std::string got = reason(json);
    EXPECT_NE(got.find(why), std::string::npos) << json << " -> " << got;
    EXPECT_EQ(got.find('\n'), std::string::npos) << got;  // one line
  }
  auto ok = Catalog::parse(
      base + R"("markets":[{"id":5,"sports":[1],"name":{"en":"X","family":"X"},"outcomes":[1]}],"tabs":{}})");
  EXPECT_EQ(ok->markets().size(), 1u);
  EXPECT_EQ(ok->version(), "t");
}

// The digest names the bytes: the same text twice, the same digest; one
// byte more, another.
TEST(Catalog, DigestFollowsTheBytes) {
  const std::string a = R"({"version":"t","languages":["en"],"vocabulary":{},"outcomes":{"1":["Yes"]},)"
                        R"("markets":[{"id":5,"sports":[1],"name":{"en":"X"},"outcomes":[1]}],"tabs":{}})";
  EXPECT_EQ(Catalog::parse(a)->digest(), Catalog::parse(a)->digest());
  EXPECT_NE(Catalog::parse(a)->digest(), Catalog::parse(a + " ")->digest());
  EXPECT_NE(Catalog::parse(a)->digest(), 0u);
}

class CatalogSourceTest : public ::testing::Test {
 protected:
  // A directory of its own: ctest runs each test in its own process, side
  // by side, and one fixed path let a test read the other's file.
  void SetUp() override { path_ = dir_.file("catalog.json"); }
  void write(const std::string& version, uint32_t market) {
    std::ofstream(path_, std::ios::trunc)
        << R"({"version":")" << version << R"(","languages":["en"],"vocabulary":{},"outcomes":{"1":["Yes"]},)"
        << R"("markets":[{"id":)" << market << R"(,"sports":[1],"name":{"en":"X"},"outcomes":[1]}],"tabs":{}})";
  }
  test::TempDir dir_;
  std::string path_;
};

TEST_F(CatalogSourceTest, ReloadReplacesOnlyAChangedGoodFile) {
  write("a", 5);
  CatalogSource src(path_);
  CatalogPtr first = src.current();
  ASSERT_NE(first->market(5), nullptr);
  std::string note;
  // The same bytes: nothing published.
  EXPECT_EQ(src.reload(note), CatalogSource::Reload::Unchanged);
  EXPECT_EQ(src.current(), first);
  EXPECT_NE(note.find("unchanged"), std::string::npos) << note;
  // New content: published.
  write("b", 6);
  EXPECT_EQ(src.reload(note), CatalogSource::Reload::Replaced);
  CatalogPtr second = src.current();
  EXPECT_NE(second, first);
  EXPECT_EQ(second->version(), "b");
  EXPECT_NE(second->market(6), nullptr);
  EXPECT_NE(note.find("a -> b"), std::string::npos) << note;
  // A bad file: the catalog stays, the note says why in one line.
  std::ofstream(path_, std::ios::trunc) << R"({"version":"c","languages":["en"])";
  EXPECT_EQ(src.reload(note), CatalogSource::Reload::Failed);
  EXPECT_EQ(src.current(), second);
  EXPECT_NE(note.find("keeping b"), std::string::npos) << note;
  EXPECT_NE(note.find("not valid JSON"), std::string::npos) << note;
  EXPECT_EQ(note.find('\n'), std::string::npos);
  // A missing file too.
  std::remove(path_.c_str());
  EXPECT_EQ(src.reload(note), CatalogSource::Reload::Failed);
  EXPECT_NE(note.find("cannot read"), std::string::npos) << note;
  EXPECT_EQ(src.current(), second);
  // Back to the first content: replaced again (content, not version, decides).
  write("a", 5);
  EXPECT_EQ(src.reload(note), CatalogSource::Reload::Replaced);
  EXPECT_EQ(src.current()->digest(), first->digest());
}

TEST_F(CatalogSourceTest, BadFileAtStartThrowsAndBuiltinNeverReloads) {
  std::ofstream(path_, std::ios::trunc) << "{";
  EXPECT_THROW(CatalogSource bad(path_), std::runtime_error);
  CatalogSource builtin("");
  EXPECT_EQ(builtin.current(), Catalog::builtin());
  std::string note;
  EXPECT_EQ(builtin.reload(note), CatalogSource::Reload::Builtin);
  EXPECT_EQ(builtin.current(), Catalog::builtin());
}

}  // namespace
}  // namespace oddsrelay
