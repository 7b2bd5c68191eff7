// The odds market body (engine/views/json_views.h), which the relay and
// REST write by hand for speed, against RapidJSON writing the same market
// value by value, as it did before: byte for byte, for the edges of every
// field, line keys that need escaping, both odds forms, and many random
// markets. Also the pieces it stands on (json_out.h: append_str,
// Writer::raw; json_chunk.h: put_id_key).
#include "engine/views/json_views.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "protocol/json_chunk.h"

namespace oddsrelay::views {
namespace {

// The reference: the market as RapidJSON's writer makes it, one value at a
// time (what write_market was before it was written by hand). Test only.
void reference_market(json::Writer& w, const Market& m, OddsForm form) {
  w.StartObject();
  for (const Line& l : m.lines) {
    w.Key(l.key.view().data(), static_cast<rapidjson::SizeType>(l.key.view().size()));
    w.StartObject();
    for (uint32_t i = l.first; i < l.first + l.count; ++i) {
      const Outcome& o = m.outcomes[i];
      const std::string id = std::to_string(o.id);
      w.Key(id.data(), static_cast<rapidjson::SizeType>(id.size()));
      w.StartArray();
      w.Int(o.price);
      w.Uint(o.flags);
      if (l.key.special().empty())
        w.Null();
      else
        w.String(l.key.special().data(), static_cast<rapidjson::SizeType>(l.key.special().size()));
      if (form == OddsForm::Post) w.Int(o.prev_price);
      w.Int64(o.ts);
      w.EndArray();
    }
    if (l.count > 0) {
      w.Key("s");
      w.Uint(l.suspended);
    }
    w.Key("ls");
    w.Int64(l.ls);
    w.EndObject();
  }
  w.EndObject();
}

std::string reference(const Market& m, OddsForm form) {
  std::string out;
  json::StringSink sink(out);
  json::Writer w(sink);
  reference_market(w, m, form);
  return out;
}

std::string fast(const Market& m, OddsForm form) {
  std::string out = "prefix";  // appended to, never replaced
  append_market(out, m, form);
  EXPECT_EQ(out.substr(0, 6), "prefix");
  return out.substr(6);
}

struct TestLine {
  std::string key;
  uint8_t suspended;
  int64_t ls;
  std::vector<Outcome> outcomes;
};

std::shared_ptr<Market> make_market(uint32_t id, const std::vector<TestLine>& lines) {
  size_t n = 0;
  for (const TestLine& l : lines) n += l.outcomes.size();
  Line* ls = nullptr;
  Outcome* os = nullptr;
  auto m = Market::make(id, lines.size(), n, &ls, &os);
  uint32_t at = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    ls[i] = Line{LineKey(lines[i].key), lines[i].suspended, at, static_cast<uint32_t>(lines[i].outcomes.size()),
                 lines[i].ls};
    for (const Outcome& o : lines[i].outcomes) os[at++] = o;
  }
  return m;
}

constexpr int32_t kI32Min = std::numeric_limits<int32_t>::min(), kI32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min(), kI64Max = std::numeric_limits<int64_t>::max();
constexpr uint32_t kU32Max = std::numeric_limits<uint32_t>::max();

TEST(MarketJson, EdgesMatchRapidJsonAndGoldenBytes) {
  auto m = make_market(7, {
                              {"s", 0, 1700000000000, {{1, 150, 0, 150, 1700000000001}, {2, 0, 1, -5, 0}}},
                              {"s-2.75", 1, -1, {{3, -120, kU32Max, kI32Min, kI64Min}}},
                              {"s10:2", 0, kI64Max, {{kU32Max, kI32Max, 7, kI32Max, kI64Max}}},
                              {"s+1.5", 0, 0, {}},  // an empty rung: only ls
                              {"s0.5", 1, kI64Min, {{0, kI32Min, 0, 0, -1}}},
                          });
  EXPECT_EQ(fast(*m, OddsForm::Get), reference(*m, OddsForm::Get));
  EXPECT_EQ(fast(*m, OddsForm::Post), reference(*m, OddsForm::Post));
  // The reference itself pinned down, so that both cannot drift together.
  EXPECT_EQ(fast(*m, OddsForm::Get),
            R"({"s":{"1":[150,0,null,1700000000001],"2":[0,1,null,0],"s":0,"ls":1700000000000},)"
            R"("s-2.75":{"3":[-120,4294967295,"-2.75",-9223372036854775808],"s":1,"ls":-1},)"
            R"("s10:2":{"4294967295":[2147483647,7,"10:2",9223372036854775807],"s":0,"ls":9223372036854775807},)"
            R"("s+1.5":{"ls":0},)"
            R"("s0.5":{"0":[-2147483648,0,"0.5",-1],"s":1,"ls":-9223372036854775808}})");
  const std::string post_head = R"({"s":{"1":[150,0,null,150,1700000000001],"2":[0,1,null,-5,0],"s":0,)";
  EXPECT_EQ(fast(*m, OddsForm::Post).substr(0, post_head.size()), post_head);
}

TEST(MarketJson, NoLinesAndOnlyEmptyRungs) {
  auto none = make_market(1, {});
  EXPECT_EQ(fast(*none, OddsForm::Get), "{}");
  EXPECT_EQ(reference(*none, OddsForm::Get), "{}");
  auto empty = make_market(1, {{"s1.5", 1, 5, {}}, {"s2.5", 0, 6, {}}});
  EXPECT_EQ(fast(*empty, OddsForm::Post), R"({"s1.5":{"ls":5},"s2.5":{"ls":6}})");
  EXPECT_EQ(fast(*empty, OddsForm::Post), reference(*empty, OddsForm::Post));
}

// No valid line key needs escaping, but the engine stores whatever key it
// is given (up to 15 bytes): the body must stay the JSON RapidJSON writes.
TEST(MarketJson, KeysThatNeedEscapingAreEscapedAsRapidJsonDoes) {
  const std::string worst = "s" + std::string(14, '\x01');  // the longest key, every special byte \u0001
  auto m = make_market(3, {
                              {"s\"q\\", 0, 1, {{1, 2, 0, 2, 3}}},
                              {worst, 1, 2, {{4, 5, 0, 5, 6}, {7, 8, 0, 8, 9}}},
                              {"s\n\t\x1f", 0, 3, {}},
                              {"s\xc3\xa9\x7f", 0, 4, {{9, 1, 0, 1, 1}}},  // UTF-8 and DEL go out as they are
                          });
  for (OddsForm form : {OddsForm::Get, OddsForm::Post}) EXPECT_EQ(fast(*m, form), reference(*m, form));
  EXPECT_NE(fast(*m, OddsForm::Get).find(R"("s\"q\\":{"1":[2,0,"\"q\\",3])"), std::string::npos);
}

// Enough outcomes in one line that the stack buffer the body is formatted
// in fills and is flushed many times over.
TEST(MarketJson, ManyOutcomesInOneLine) {
  std::vector<Outcome> os;
  for (uint32_t i = 0; i < 500; ++i) os.push_back({kU32Max - i, kI32Min, kU32Max, kI32Min, kI64Min + i});
  auto m = make_market(9, {{"s" + std::string(14, '"'), 1, kI64Min, os}, {"s", 0, 1, os}});
  for (OddsForm form : {OddsForm::Get, OddsForm::Post}) EXPECT_EQ(fast(*m, form), reference(*m, form));
}

TEST(MarketJson, RandomMarketsMatchRapidJson) {
  std::mt19937_64 rng(20261126);  // fixed: the same markets every run
  auto pick = [&](auto... v) {
    const int64_t vs[] = {static_cast<int64_t>(v)...};
    return vs[rng() % sizeof...(v)];
  };
  const char* keys[] = {"s", "s-2.75", "s10:2", "s+0.5", "s2.5", "s0:0", "s-10.25", "s123456789.1234"};
  for (int round = 0; round < 2000; ++round) {
    std::vector<TestLine> lines(rng() % 6);
    for (TestLine& l : lines) {
      l.key = keys[rng() % std::size(keys)];
      l.suspended = static_cast<uint8_t>(rng() % 2);
      l.ls = pick(0, -1, kI64Min, kI64Max, 1700000000000 + static_cast<int64_t>(rng() % 100000000));
      l.outcomes.resize(rng() % 5);
      for (Outcome& o : l.outcomes) {
        o.id = static_cast<uint32_t>(pick(0, 1, kU32Max, rng() % 100000));
        o.price = static_cast<int32_t>(pick(0, -1, kI32Min, kI32Max, 100 + rng() % 100000));
        o.flags = static_cast<uint32_t>(pick(0, 1, kU32Max, rng()));
        o.prev_price = static_cast<int32_t>(pick(0, kI32Min, kI32Max, static_cast<int32_t>(rng())));
        o.ts = pick(0, -1, kI64Min, kI64Max, static_cast<int64_t>(rng()));
      }
    }
    auto m = make_market(static_cast<uint32_t>(round), lines);
    for (OddsForm form : {OddsForm::Get, OddsForm::Post}) {
      ASSERT_EQ(fast(*m, form), reference(*m, form)) << "round " << round;
    }
  }
}

// write_market through a writer: the writer still owes and writes the
// separators around the hand-written body.
TEST(MarketJson, WrittenThroughAWriterKeepsItsPunctuation) {
  auto m = make_market(5, {{"s-1.5", 0, 10, {{11, 190, 0, 185, 12}}}, {"s", 1, 13, {}}});
  // {"a": <Post>, "b": [<Get>, <Get>], "c": 1}, the market written by `market`.
  auto document = [&](void (*market)(json::Writer&, const Market&, OddsForm)) {
    std::string out;
    json::StringSink sink(out);
    json::Writer w(sink);
    w.StartObject();
    w.Key("a");
    market(w, *m, OddsForm::Post);
    w.Key("b");
    w.StartArray();
    market(w, *m, OddsForm::Get);
    market(w, *m, OddsForm::Get);
    w.EndArray();
    w.Key("c");
    w.Int(1);
    w.EndObject();
    return out;
  };
  const std::string got = document(write_market), want = document(reference_market);
  EXPECT_EQ(got, want);
}

TEST(JsonOut, AppendStrIsWriterString) {
  const std::string cases[] = {"",          "s-2.75",  "sr:match:1", std::string("a\0b", 3),
                               "\"",        "\\",      "\x1f\x7f",   "caf\xc3\xa9",
                               "tab\there", "\b\f\n\r"};
  for (const std::string& s : cases) {
    std::string got = "x", want = "x";
    json::append_str(got, s);
    json::StringSink sink(want);
    json::Writer w(sink);
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
    EXPECT_EQ(got, want) << "case " << s;
  }
}

TEST(JsonOut, PutIdKey) {
  char buf[json::kMaxIdKey];
  for (uint32_t id : {0u, 7u, 1001u, kU32Max}) {
    const std::string want = "\"" + std::to_string(id) + "\":";
    EXPECT_EQ(std::string(buf, json::put_id_key(buf, id)), want);
  }
  EXPECT_EQ(std::string(buf, json::put_id_key(buf, kU32Max)).size(), json::kMaxIdKey);
}

}  // namespace
}  // namespace oddsrelay::views
