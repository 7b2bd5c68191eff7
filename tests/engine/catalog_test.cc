// The built-in market catalog: the spec's ids with their meanings and
// outcomes, size and shape per sport, tabs that name real markets, names
// composed per language with English fallback, and clear load errors.
#include "engine/catalog.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

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
      {1001, "1x2", {2001, 2002, 2003}},         {1004, "correct_score", {2201, 2202}},
      {1005, "handicap_asian", {2021, 2022}},    {1007, "total", {2101, 2102}},
      {1009, "dnb", {2001, 2003}},               {1011, "handicap_asian", {2021, 2022}},
      {1012, "correct_score", {2201, 2202}},     {1018, "total", {2101, 2102}},
      {1019, "btts", {2010, 2011}},              {1054, "handicap_asian", {2021, 2022}},
      {1080, "total", {2101, 2102}},             {1128, "corners_total", {2101, 2102}},
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

TEST(Catalog, SizeAndShapeLikeTheRealService) {
  const auto& ms = cat().markets();
  EXPECT_GT(ms.size(), 4000u);
  size_t pairs = 0, coded = 0, soccer = 0;
  for (const auto& m : ms) {
    pairs += m.outcomes.size();
    coded += !m.code.empty();
    soccer += m.in_sport(1);
    EXPECT_FALSE(m.name.en.empty());
    EXPECT_FALSE(m.sports.empty());
  }
  EXPECT_GT(pairs, 10000u);
  EXPECT_GT(coded, 600u);
  EXPECT_GT(soccer, 450u);
  EXPECT_LT(soccer, 650u);
  EXPECT_EQ(cat().sports().size(), 24u);  // every sport of docs/api.md "Sports"
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
  EXPECT_EQ(cat().tabs(1)->prematch.size(), 13u);  // docs/api.md: soccer has 13 prematch tabs
}

TEST(Catalog, NamesComposeFromTranslatedParts) {
  const int de = cat().lang_index("de"), zh = cat().lang_index("zh");
  ASSERT_GT(de, 0);
  EXPECT_EQ(cat().market_name(*cat().market(1054), 0), "1st Half - Asian Handicap");
  EXPECT_EQ(cat().market_name(*cat().market(1054), de), "1. Halbzeit - Asiatisches Handicap");
  EXPECT_EQ(cat().market_name(*cat().market(1128), de), "Ecken - Gesamt");
  EXPECT_EQ(cat().outcome_name(2001, de), "Heim");
  EXPECT_EQ(cat().outcome_name(2101, zh), "大");
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
  EXPECT_NE(reason("{}").find("version"), std::string::npos);
  EXPECT_NE(reason(R"({"version":"x","languages":["de"]})").find("languages"), std::string::npos);
  const std::string base = R"({"version":"t","languages":["en","de"],"vocabulary":{},"outcomes":{"1":["Yes"]},)";
  EXPECT_NE(reason(base + R"("markets":[{"id":5,"sports":[1],"name":{"en":"X"},"outcomes":[2]}],"tabs":{}})")
                .find("unknown outcome"),
            std::string::npos);
  EXPECT_NE(reason(base + R"("markets":[],"tabs":{"1":{"prematch":[{"key":"k","name":"K","markets":[9]}],"live":[]}}})")
                .find("unknown market"),
            std::string::npos);
  auto ok = Catalog::parse(base + R"("markets":[{"id":5,"sports":[1],"name":{"en":"X","family":"X"},"outcomes":[1]}],"tabs":{}})");
  EXPECT_EQ(ok->markets().size(), 1u);
  EXPECT_EQ(ok->version(), "t");
}

}  // namespace
}  // namespace oddsrelay
