// The SAX fast path for market lines (protocol/feed_market_sax.cc) against
// the DOM path it stands in front of: on every line, simulator lines and
// tens of thousands of mutated ones, both give the same status, error,
// record and unknown-field count, and the fast path takes the plain lines.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "protocol/feed_reader.h"
#include "protocol/feed_writer.h"
#include "tests/test_util.h"

namespace oddsrelay::feed {
namespace {

std::string describe(const Record& r) {
  std::string s = "at=" + std::to_string(r.at) + " id=" + r.id + " number=" + std::to_string(r.number) +
                  " text=" + r.text + " op=" + std::to_string(static_cast<int>(r.op())) + " | ";
  if (const auto* m = std::get_if<MarketRec>(&r.body)) {
    s += "market=" + std::to_string(m->market);
    for (const LineIn& l : m->lines)
      s += " [" + l.key + " s=" + std::to_string(l.suspended) + " first=" + std::to_string(l.first) +
           " count=" + std::to_string(l.count) + "]";
    for (const OutcomeIn& o : m->outcomes)
      s += " " + std::to_string(o.id) + ":" + std::to_string(o.price) + "/" + std::to_string(o.flags);
  } else {
    write_record(r, s);
  }
  return s;
}

struct Both {
  FeedParser fast, dom;
  Both() {
    dom.fast_markets(false);
    fast.keep_text(true);
    dom.keep_text(true);
  }
  // Parses `line` on both paths; true when the fast path took it.
  bool same(const std::string& line) {
    Record a, b;
    const uint64_t taken = fast.fast_market_records(), unknown = fast.unknown_fields();
    const uint64_t dom_unknown = dom.unknown_fields();
    const LineStatus sa = fast.parse(line, a), sb = dom.parse(line, b);
    EXPECT_EQ(sa, sb) << line;
    EXPECT_EQ(fast.unknown_fields() - unknown, dom.unknown_fields() - dom_unknown) << line;
    if (sa == LineStatus::Record && sb == LineStatus::Record) {
      EXPECT_EQ(describe(a), describe(b)) << line;
    } else if (sa != LineStatus::Record) {
      EXPECT_EQ(fast.error(), dom.error()) << line;
    }
    return fast.fast_market_records() != taken;
  }
};

std::vector<std::string> sim_lines(size_t n) {
  std::vector<std::string> out;
  for (const Record& r : test::sim_records(n)) {
    out.emplace_back();
    write_record(r, out.back());
  }
  return out;
}

}  // namespace

TEST(FeedMarketSax, TakesEverySimulatorMarketLineWithTheSameRecord) {
  Both p;
  size_t markets = 0, taken = 0;
  for (const std::string& line : sim_lines(5000)) {
    markets += line.find(R"("op":"market")") != std::string::npos;
    taken += p.same(line);
  }
  EXPECT_GT(markets, 3500u);
  EXPECT_EQ(taken, markets);
}

TEST(FeedMarketSax, PlainShapesTakenOthersLeftToTheDomPath) {
  struct Case {
    const char* line;
    bool taken;
  };
  const Case cases[] = {
      {R"({"at":5,"op":"market","id":"s7-1.99","market":1001,"lines":{"s":{"s":0,"o":{"2001":[185,0]}}}})", true},
      // Any order of fields, a line without `s`, an empty rung, a removal.
      {R"({"lines":{"s2.5":{"o":{"1":[150,2]},"s":1},"s3.5":{"o":{}}},"market":7,"id":"9","op":"market","at":1})",
       true},
      {R"({"at":1,"op":"market","id":"9","market":7,"lines":{}})", true},
      {R"(  {"at":-4,"op":"market","id":"9","market":7,"lines":{}}  )", true},
      {R"({"at":1099511627776,"op":"market","id":"9","market":4294967295,"lines":{}})", true},
      {R"({"at":1,"op":"market","id":"9","market":7,"lines":{"s":{"o":{"999999999":[2147483647,4294967295]}}}})", true},
      // Escapes are undone as on the DOM path; a repeated line or `o` is kept twice by both.
      {R"({"at":1,"op":"market","id":"9","market":7,"lines":{"s\u0032.5":{"o":{"1":[150,0]}}}})", true},
      {R"({"lines":{"s":{"s":0,"o":{"1":[150,0],"2":[160,0]}}},"market":7,"id":"9","at":1,"op":"m\u0061rket"})", true},
      {R"({"at":1,"op":"market","id":"9","market":7,"lines":{"s":{"o":{"1":[1,0]}},"s":{"o":{"1":[2,0]},"o":{"2":[3,0]}}}})",
       true},
      // Left to the DOM path: unknown fields (counted there), repeated fields,
      // numbers out of range, other ops, bad keys and ids, broken JSON, and
      // anything after the object (which the DOM path then rejects).
      {R"({"at":1,"op":"market","id":"9","market":7,"lines":{}} trailing)", false},
      {R"({"at":1,"op":"market","id":"9","market":7,"lines":{},"x":1})", false},
      {R"({"at":1,"op":"market","id":"9","market":7,"lines":{"s":{"o":{},"q":[]}}})", false},
      {R"({"at":1,"op":"market","id":"9","market":7,"lines":{"s":{"o":{"1":{"p":1}}}}})", false},
      {R"({"at":1,"op":"market","id":"9","market":7,"market":8,"lines":{}})", false},
      {R"({"at":1,"op":"market","id":"9","market":4294967296,"lines":{}})", false},
      {R"({"at":9223372036854775808,"op":"market","id":"9","market":7,"lines":{}})", false},
      {R"({"at":1.5,"op":"market","id":"9","market":7,"lines":{}})", false},
      {R"({"at":1,"op":"market","id":"9","market":0,"lines":{}})", false},
      {R"({"at":1,"op":"market","id":"9","market":7,"lines":{"s":{"o":{"1":[2147483648,0]}}}})", false},
      {R"({"at":1,"op":"market","id":"9","market":7,"lines":{"s":{"o":{"1":[150,4294967296]}}}})", false},
      {R"({"at":1,"op":"market","id":"9","market":7,"lines":{"s":{"o":{"1":[-1,0]}}}})", false},
      {R"({"at":1,"op":"market","id":"9","market":7,"lines":{"s":{"o":{"1":[150,0,0]}}}})", false},
      {R"({"at":1,"op":"market","id":"9","market":7,"lines":{"s":{"o":{"0":[150,0]}}}})", false},
      {R"({"at":1,"op":"market","id":"9","market":7,"lines":{"s":{"s":2}}})", false},
      {R"({"at":1,"op":"market","id":"9","market":7,"lines":{"x":{}}})", false},
      {R"({"at":1,"op":"market","id":"9","market":7,"lines":{"s":[]}})", false},
      {R"({"at":1,"op":"market","id":"bogus","market":7,"lines":{}})", false},
      {R"({"at":1,"op":"market","id":"9","market":7})", false},
      {R"({"at":1,"op":"market","id":"9","lines":{}})", false},
      {R"({"op":"market","id":"9","market":7,"lines":{}})", false},
      {R"({"at":1,"op":"remove","id":"9"})", false},
      {R"({"at":1,"op":"m\u0061rket","id":"9","market":7,"lines":{}})", false},  // op read early: not "market"
      {R"({"at":1,"op":"score","id":"9","status":"live"})", false},
      {R"({"op":"header","format":"oddsfeed","version":1})", false},
      {R"({"at":1,"op":"market","id":"9","market":7,"lines":{"s":{"o":{"1":[150,0])", false},
      {R"([{"at":1}])", false},
  };
  Both p;
  for (const Case& c : cases) EXPECT_EQ(p.same(c.line), c.taken) << c.line;
  // A journal line (checksummed) takes it too.
  std::string line = R"({"at":1,"op":"market","id":"9","market":7,"lines":{"s":{"o":{"1":[150,0]}}}})";
  append_checksum(line, 0);
  EXPECT_TRUE(p.same(line));
}

TEST(FeedMarketSax, MutatedLinesParseAlikeOnBothPaths) {
  const std::vector<std::string> lines = sim_lines(2000);
  const char* const pieces[] = {",",
                                "-1",
                                ".5",
                                "e3",
                                "null",
                                "true",
                                "\"x\":1,",
                                "\"s\":1,",
                                "\"o\":{},",
                                "[1,2]",
                                "{}",
                                "\"market\":2,",
                                "\"at\":3,",
                                "\"lines\":{},",
                                "\"id\":\"9\",",
                                "\"op\":\"market\",",
                                "4294967296",
                                "2147483648",
                                "9223372036854775808",
                                "\\u0073",
                                "\"",
                                "0",
                                "00",
                                " ",
                                "\"s2.5\":{\"o\":{}},"};
  const std::string swaps = "09-.e\",:{}[]so1a\\ x";
  std::mt19937 rng(23);
  Both p;
  size_t taken = 0, records = 0;
  for (int i = 0; i < 40000; ++i) {
    std::string l = lines[rng() % lines.size()];
    for (int k = 1 + static_cast<int>(rng() % 2); k > 0; --k) {
      const size_t at = rng() % (l.size() + 1);
      switch (rng() % 4) {
        case 0:
          if (at < l.size()) l[at] = swaps[rng() % swaps.size()];
          break;
        case 1:
          if (at < l.size()) l.erase(at, 1);
          break;
        case 2:
          l.insert(at, pieces[rng() % std::size(pieces)]);
          break;
        default: {
          const size_t len = rng() % 24;
          if (at + len <= l.size()) l.insert(at, l.substr(at, len));
        }
      }
    }
    Record r;
    taken += p.same(l);
    records += p.dom.parse(l, r) == LineStatus::Record;
    if (HasFailure()) break;
  }
  // Both sides of the fast path were exercised: taken, and given up on.
  std::printf("%zu mutated lines: %zu records, %zu by the fast path\n", size_t{40000}, records, taken);
  EXPECT_GT(taken, 2000u);
  EXPECT_GT(records, taken);
}

}  // namespace oddsrelay::feed
