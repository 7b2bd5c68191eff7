#include "protocol/feed_reader.h"

#include <gtest/gtest.h>

#include "protocol/feed_writer.h"

namespace oddsrelay::feed {
namespace {

LineStatus parse(FeedParser& p, const std::string& line, Record& r) { return p.parse(line, r); }

}  // namespace

TEST(FeedReader, ParsesMarketRecord) {
  FeedParser p;
  Record r;
  ASSERT_EQ(
      parse(
          p,
          R"({"at":5,"op":"market","id":"s7-1.99","market":1001,"lines":{"s":{"s":0,"o":{"2001":[185,0],"2002":[340,0],"2003":[420,0]}},"s2.5":{"s":1,"o":{"2101":[190,0],"2102":[195,4]}},"s3.5":{"s":0,"o":{}}}})",
          r),
      LineStatus::Record)
      << p.error();
  EXPECT_EQ(r.at, 5);
  EXPECT_EQ(r.number, 99u);
  EXPECT_EQ(r.op(), Op::Market);
  const auto& m = std::get<MarketRec>(r.body);
  EXPECT_EQ(m.market, 1001u);
  ASSERT_EQ(m.lines.size(), 3u);
  EXPECT_EQ(m.lines[1].key, "s2.5");
  EXPECT_EQ(m.lines[1].suspended, 1);
  EXPECT_EQ(m.lines[1].count, 2u);
  EXPECT_EQ(m.outcomes[m.lines[1].first + 1].flags, 4u);
  EXPECT_EQ(m.lines[2].count, 0u);  // empty rung kept
  EXPECT_EQ(m.outcomes.size(), 5u);
}

TEST(FeedReader, ParsesEventScoreStatsRemove) {
  FeedParser p;
  Record r;
  ASSERT_EQ(
      parse(
          p,
          R"({"at":1,"op":"event","id":"s7-1.99","event":{"c":[1,"England",1,"GB"],"t":[2,"PL",1],"g":3,"ts":100,"h":"A","a":"B","co":4,"map":{"s7_l1.99":{"p":0}},"s":0,"ms":12,"live":true,"sport":1}})",
          r),
      LineStatus::Record)
      << p.error();
  const auto& e = *std::get<std::shared_ptr<const EventObject>>(r.body);
  EXPECT_EQ(e.h, "A");
  EXPECT_TRUE(e.live);
  EXPECT_EQ(e.map.size(), 1u);
  EXPECT_EQ(
      e.json,
      R"({"c":[1,"England",1,"GB"],"t":[2,"PL",1],"g":3,"ts":100,"h":"A","a":"B","co":4,"map":{"s7_l1.99":{"p":0}},"s":0,"ms":12,"live":true,"sport":1})");

  ASSERT_EQ(
      parse(
          p,
          R"({"at":2,"op":"score","id":"99","home":1,"away":null,"status":"ended","clock":"90:00","ht":[1,0],"result":"abandoned"})",
          r),
      LineStatus::Record)
      << p.error();
  const auto& s = r.score();
  EXPECT_EQ(*s.home, 1);
  EXPECT_FALSE(s.away.has_value());
  EXPECT_EQ(s.status, ScoreStatus::Ended);
  EXPECT_EQ(s.result, MatchResult::Abandoned);
  EXPECT_EQ(s.ht->first, 1);

  ASSERT_EQ(parse(p, R"({"at":3,"op":"stats","id":"99","corners":[5,3],"cards":[2,1],"final":true})", r),
            LineStatus::Record);
  const auto& st = r.stats();
  EXPECT_EQ(st.values[0]->first, 5);
  EXPECT_TRUE(st.final);
  EXPECT_EQ(p.unknown_fields(), 1u);  // "cards" is not a stat name of the format

  ASSERT_EQ(parse(p, R"({"at":4,"op":"remove","id":"s7_p3.99"})", r), LineStatus::Record);
  EXPECT_EQ(r.op(), Op::Remove);
  EXPECT_EQ(r.number, 99u);
}

// Scores and stats are held out of line, so a record is sized for a market
// (each is moved into its batch); a copy still copies them whole.
TEST(FeedReader, ARecordIsSizedForAMarketAndCopiesAScoreWhole) {
  static_assert(sizeof(Record) <= 160, "a score or stats body inline again makes every record 248 bytes");
  FeedParser p;
  Record r;
  ASSERT_EQ(parse(p, R"({"at":2,"op":"score","id":"99","home":1,"away":0,"status":"live","clock":"12:00"})", r),
            LineStatus::Record);
  Record copy = r;
  copy.score().home = 3;
  copy.score().clock = "13:00";
  EXPECT_EQ(*r.score().home, 1);
  EXPECT_EQ(*r.score().clock, "12:00");
  EXPECT_EQ(*copy.score().home, 3);
  Record moved = std::move(copy);
  EXPECT_EQ(*moved.score().clock, "13:00");
  copy = moved;  // a moved-from record is assigned to again
  EXPECT_EQ(*copy.score().home, 3);
  Record taken = std::move(moved);
  Record empty = moved;  // and a moved-from one copies (as empty), not a null read
  EXPECT_EQ(empty.op(), Op::Score);
  EXPECT_EQ(*taken.score().home, 3);
}

TEST(FeedReader, MalformedLinesSayWhy) {
  struct Case {
    const char* line;
    const char* why;
  };
  const Case cases[] = {
      {R"({"at":1,"op":"market")", "invalid JSON"},
      {R"([1,2])", "not a JSON object"},
      {R"({"op":"remove","id":"5"})", "'at'"},
      {R"({"at":"1","op":"remove","id":"5"})", "'at'"},
      {R"({"at":1,"op":"remove"})", "'id'"},
      {R"({"at":1,"op":"remove","id":"bogus"})", "valid event id"},
      {R"({"at":1,"op":"market","id":"5","lines":{}})", "'market' missing"},
      {R"({"at":1,"op":"market","id":"5","market":1})", "'lines' missing"},
      {R"({"at":1,"op":"market","id":"5","market":1,"lines":{"x2":{}}})", "invalid line key"},
      {R"({"at":1,"op":"market","id":"5","market":1,"lines":{"s":{"o":{"1":[1.5,0]}}}})", "price_x100"},
      {R"({"at":1,"op":"market","id":"5","market":1,"lines":{"s":{"o":{"abc":[150,0]}}}})", "outcome id"},
      {R"({"at":1,"op":"market","id":"5","market":1,"lines":{"s":{"s":2,"o":{}}}})", "line 's'"},
      {R"({"at":1,"op":"score","id":"5","status":"paused"})", "status"},
      {R"({"at":1,"op":"score","id":"5","home":1})", "'status' missing"},
      {R"({"at":1,"op":"event","id":"5","event":{"h":"A"}})", "'sport' missing"},
      {R"({"at":1,"op":"event","id":"5","event":{"sport":1,"live":"yes"}})", "'live'"},
      {R"({"at":1,"op":"stats","id":"5","corners":[1]})", "corners"},
      // Regression (feed_line fuzz target): a non-object `map` used to be walked as an object.
      {R"({"at":1,"op":"event","id":"5","event":{"sport":1,"map":true}})", "'map'"},
      {R"({"at":1,"op":"event","id":"5","event":{"sport":1,"map":{"s7_l1.5":3}}})", "'map'"},
      // One object a line: anything but whitespace after it is not taken
      // (it once was, and the journal then wrote the line back broken).
      {R"({"at":1,"op":"remove","id":"5"} x)", "root must not be followed"},
      {R"({"at":1,"op":"remove","id":"5"}{"at":2,"op":"remove","id":"6"})", "root must not be followed"},
      {R"({"at":1,"op":"market","id":"5","market":1,"lines":{"s":{"o":{"1":[150,0]}}}}])", "root must not be followed"},
      {"{\"at\":1,\"op\":\"market\",\"id\":\"5\",\"market\":1,\"lines\":{}}\t,", "root must not be followed"},
  };
  FeedParser p;
  for (const auto& c : cases) {
    Record r;
    EXPECT_EQ(parse(p, c.line, r), LineStatus::Malformed) << c.line;
    EXPECT_NE(p.error().find(c.why), std::string::npos) << c.line << " -> " << p.error();
  }
}

TEST(FeedReader, UnknownOpIsSkippedNotFatal) {
  FeedParser p;
  Record r;
  EXPECT_EQ(parse(p, R"({"at":1,"op":"teleport","id":"5"})", r), LineStatus::UnknownOp);
  EXPECT_EQ(parse(p, R"({"at":1,"op":"remove","id":"5","extra":1})", r), LineStatus::Record);
  EXPECT_EQ(p.unknown_fields(), 1u);
}

TEST(FeedReader, HeaderVersionChecked) {
  FeedParser p;
  Record r;
  EXPECT_EQ(parse(p, R"({"op":"header","format":"oddsfeed","version":1,"provider":"s7"})", r), LineStatus::Header);
  EXPECT_EQ(p.provider(), "s7");
  EXPECT_EQ(parse(p, R"({"op":"header","format":"oddsfeed","version":2})", r), LineStatus::UnsupportedVersion);
  EXPECT_NE(p.error().find("version 2"), std::string::npos);
}

TEST(FeedReader, BlankAndCrlfLines) {
  FeedParser p;
  Record r;
  EXPECT_EQ(parse(p, "", r), LineStatus::Blank);
  EXPECT_EQ(parse(p, "  \r\n", r), LineStatus::Blank);
  EXPECT_EQ(parse(p, "{\"at\":1,\"op\":\"remove\",\"id\":\"5\"}\r\n", r), LineStatus::Record);
}

// Tabs, CR and LF around the object are JSON whitespace: the record is
// taken, on the market fast path and the DOM path alike, and the line it
// keeps is the object alone (what the journal writes back, checksummed).
TEST(FeedReader, WhitespaceAroundTheObjectIsNotPartOfTheLine) {
  const std::string market = R"({"at":1,"op":"market","id":"5","market":1,"lines":{"s":{"o":{"1":[150,0]}}}})";
  const std::string remove = R"({"at":1,"op":"remove","id":"5"})";
  for (const std::string& obj : {market, remove})
    for (bool fast : {true, false}) {
      FeedParser p;
      p.keep_text(true);
      p.fast_markets(fast);
      Record r;
      ASSERT_EQ(parse(p, "\t \r" + obj + " \t\t\r\n", r), LineStatus::Record) << p.error();
      EXPECT_EQ(r.text, obj);
    }
}

TEST(FeedReader, ChecksumVerified) {
  std::string line = R"({"at":1,"op":"remove","id":"5"})";
  append_checksum(line, 0);
  FeedParser p;
  Record r;
  EXPECT_EQ(parse(p, line, r), LineStatus::Record);
  EXPECT_EQ(p.unknown_fields(), 0u);  // the checksum field is not "unknown"
  std::string bad = line;
  bad[10] = '2';  // "at":2
  EXPECT_EQ(parse(p, bad, r), LineStatus::BadChecksum);
  std::string torn = line.substr(0, line.size() - 5);
  EXPECT_EQ(parse(p, torn, r), LineStatus::Malformed);
}

TEST(FeedReader, ReusesParserAcrossManyLines) {
  FeedParser p;
  Record r;
  for (int i = 0; i < 20000; ++i) {
    std::string line = R"({"at":)" + std::to_string(i) +
                       R"(,"op":"market","id":"7","market":1,"lines":{"s":{"s":0,"o":{"1":[150,0]}}}})";
    ASSERT_EQ(parse(p, line, r), LineStatus::Record);
    ASSERT_EQ(r.at, i);
  }
}

}  // namespace oddsrelay::feed
