// The packed form of an ended event's withdrawn lines (engine/core/packed_lines.h):
// unpacking gives back every field exactly, at the edges of every field's
// range too, and the packed bytes are a fraction of the Market form.
#include "engine/core/packed_lines.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "engine/core/retention.h"

namespace oddsrelay {
namespace {

struct LineSpec {
  std::string key;
  uint8_t suspended;
  int64_t ls;
  std::vector<Outcome> outcomes;
};

MarketRef make_market(uint32_t id, const std::vector<LineSpec>& specs) {
  size_t nouts = 0;
  for (const auto& s : specs) nouts += s.outcomes.size();
  Line* lines;
  Outcome* outs;
  auto m = Market::make(id, specs.size(), nouts, &lines, &outs);
  uint32_t next = 0;
  for (size_t i = 0; i < specs.size(); ++i) {
    lines[i].key = LineKey(specs[i].key);
    lines[i].suspended = specs[i].suspended;
    lines[i].ls = specs[i].ls;
    lines[i].first = next;
    lines[i].count = static_cast<uint32_t>(specs[i].outcomes.size());
    for (const Outcome& o : specs[i].outcomes) outs[next++] = o;
  }
  return MarketRef{id, std::move(m)};
}

// Every field of every line and outcome, in order.
std::string fields(const MarketList& ms) {
  std::string out;
  for (const MarketRef& ref : ms) {
    out += "M" + std::to_string(ref.id) + "/" + std::to_string(ref->id) +
           " lines=" + std::to_string(ref->lines.size()) + " outcomes=" + std::to_string(ref->outcomes.size()) + "\n";
    for (const Line& l : ref->lines) {
      out += " L" + std::string(l.key.view()) + " s=" + std::to_string(l.suspended) +
             " first=" + std::to_string(l.first) + " n=" + std::to_string(l.count) + " ls=" + std::to_string(l.ls);
      for (uint32_t k = l.first; k < l.first + l.count; ++k) {
        const Outcome& o = ref->outcomes[k];
        out += " " + std::to_string(o.id) + ":" + std::to_string(o.price) + ":" + std::to_string(o.flags) + ":" +
               std::to_string(o.prev_price) + ":" + std::to_string(o.ts);
      }
      out += "\n";
    }
  }
  return out;
}

constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min(), kMax64 = std::numeric_limits<int64_t>::max();
constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min(), kMax32 = std::numeric_limits<int32_t>::max();
constexpr uint32_t kMaxU32 = std::numeric_limits<uint32_t>::max();

TEST(PackedLines, UnpackingGivesBackEveryField) {
  const int64_t t = 1'764'000'000'000;
  MarketList ms;
  ms.push_back(
      make_market(1, {{"s", 0, t, {{1, 250, 0, 240, t - 5'000}, {2, 310, 0, 310, t - 65'000}, {3, 101, 1, 99, t}}}}));
  ms.push_back(make_market(18, {{"s2.5", 1, t + 3, {{12, 190, 0, 200, t - 1}, {13, 180, 0, 170, t + 7}}},
                                {"s3.5", 0, t + 3, {}},  // an empty rung: no outcomes
                                {"s-0.25", 255, t - 9'000'000, {{7, 1000000, 2, 999999, t - 86'400'000}}}}));
  // The edges of each field's range: deltas that wrap, the longest key.
  ms.push_back(make_market(kMaxU32, {{"s123456789abcde", 1, kMin64, {{kMaxU32, kMin32, kMaxU32, kMax32, kMax64}}},
                                     {"", 0, kMax64, {{0, kMax32, 0, kMin32, kMin64}}},
                                     {"s0", 0, 0, {{5, -3, 0, 0, 0}}}}));
  const PackedLines packed = pack_lines(ms);
  EXPECT_EQ(packed.capacity(), packed.size());
  const MarketList back = unpack_lines(packed);
  EXPECT_EQ(fields(back), fields(ms));
  for (size_t i = 0; i < back.size(); ++i) EXPECT_EQ(back[i].id, back[i]->id);
}

TEST(PackedLines, NothingPacksToNothing) {
  EXPECT_TRUE(pack_lines({}).empty());
  EXPECT_TRUE(unpack_lines({}).empty());
}

TEST(PackedLines, AThirdOfTheMarketForm) {
  // A ladder withdrawn at kick-off: 20 rungs of two outcomes, read within
  // minutes of each other.
  const int64_t t = 1'764'000'000'000;
  std::vector<LineSpec> rungs;
  for (int i = 0; i < 20; ++i)
    rungs.push_back(
        {"s" + std::to_string(i) + ".5",
         0,
         t,
         {{12, 150 + 10 * i, 0, 155 + 10 * i, t - 1'000 * i}, {13, 300 - 5 * i, 0, 290 - 5 * i, t - 2'000}}});
  MarketList ms;
  ms.push_back(make_market(18, rungs));
  size_t market_form = 0;
  for (const MarketRef& m : ms) market_form += market_bytes(*m);
  const PackedLines packed = pack_lines(ms);
  EXPECT_LT(packed.size() * 3, market_form) << packed.size() << " packed against " << market_form;
  EXPECT_EQ(fields(unpack_lines(packed)), fields(ms));
}

}  // namespace
}  // namespace oddsrelay
