#include "protocol/feed_writer.h"

#include <gtest/gtest.h>

#include "protocol/feed_reader.h"

namespace oddsrelay::feed {

// Parsing then writing gives the canonical form; writing that again is a fixed point.
TEST(FeedWriter, RoundTripsEveryOp) {
  const char* lines[] = {
      R"({"at":1,"op":"event","id":"s7-1.99","event":{"c":[1,"England",1,"GB"],"t":[2,"PL",1],"g":3,"ts":100,"h":"A \"Q\"","a":"B","co":4,"map":{"s7_p1.99":{"p":0},"s7_p2.99":{"p":1}},"s":0,"live":false,"sport":1}})",
      R"({"at":2,"op":"market","id":"s7-1.99","market":1001,"lines":{"s":{"s":0,"o":{"2001":[185,0],"2002":[340,0],"2003":[420,0]}},"s-0.25":{"s":1,"o":{"2021":[190,0],"2022":[195,4]}},"s1:0":{"s":0,"o":{}}}})",
      R"({"at":3,"op":"market","id":"99","market":1001,"lines":{}})",
      R"({"at":4,"op":"score","id":"99","home":2,"away":1,"status":"ended","clock":"90:00","period":"FT","match_length":90,"ht":[1,1],"kickoff":100,"result":"completed"})",
      R"({"at":5,"op":"score","id":"99","home":null,"away":null,"status":"scheduled","postponed":true})",
      R"({"at":6,"op":"stats","id":"99","corners":[5,3],"red_cards":[0,1],"final":true})",
      R"({"at":7,"op":"remove","id":"s7_l1.99"})",
  };
  FeedParser p;
  for (const char* line : lines) {
    Record r;
    ASSERT_EQ(p.parse(line, r), LineStatus::Record) << line << ": " << p.error();
    std::string out;
    write_record(r, out);
    EXPECT_EQ(out, line);
    Record r2;
    ASSERT_EQ(p.parse(out, r2), LineStatus::Record);
    std::string out2;
    write_record(r2, out2);
    EXPECT_EQ(out2, out);
  }
}

// A parser asked to keep lines (the journal's, a capture's or the bus's
// source) hands each record its own line, trimmed and without a journal
// checksum, and writing the record copies it: spacing and field order as
// read, not as the writer would encode them. Off (the default) records
// carry none and are encoded.
TEST(FeedWriter, AKeptLineIsWrittenAsRead) {
  const std::string spaced =
      R"({ "op":"market", "at":2, "id":"99", "market":1001, "lines":{"s":{"o":{"2001":[185,0]}}} })";
  FeedParser keep;
  keep.keep_text(true);
  Record r;
  ASSERT_EQ(keep.parse("  " + spaced + "\r\n", r), LineStatus::Record) << keep.error();
  EXPECT_EQ(r.text, spaced);
  std::string out;
  write_record(r, out);
  EXPECT_EQ(out, spaced);

  std::string journal = spaced;  // a journal line: its checksum is not part of the record's line
  append_checksum(journal, 0);
  ASSERT_EQ(keep.parse(journal, r), LineStatus::Record) << keep.error();
  EXPECT_EQ(r.text, spaced);

  FeedParser plain;
  ASSERT_EQ(plain.parse(spaced, r), LineStatus::Record);
  EXPECT_TRUE(r.text.empty());
  out.clear();
  write_record(r, out);
  EXPECT_EQ(out, R"({"at":2,"op":"market","id":"99","market":1001,"lines":{"s":{"s":0,"o":{"2001":[185,0]}}}})");
}

TEST(FeedWriter, ChecksumCoversTheWholeLine) {
  std::string line = R"({"at":1,"op":"remove","id":"5"})";
  append_checksum(line, 0);
  EXPECT_EQ(verify_checksum(line), ChecksumState::Valid);
  for (size_t i = 0; i + kChecksumSuffixLen < line.size(); ++i) {
    std::string bad = line;
    bad[i] ^= 1;
    EXPECT_NE(verify_checksum(bad), ChecksumState::Valid) << i;
  }
  EXPECT_EQ(verify_checksum(R"({"at":1,"op":"remove","id":"5"})"), ChecksumState::Absent);
}

}  // namespace oddsrelay::feed
