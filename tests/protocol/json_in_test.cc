// protocol/json_in.h: every limit at its value (taken) and one past it
// (refused with its error), and the nesting bombs that overflowed the stack
// through RapidJSON's recursive parser (issue 41: a 110,000-level body
// killed the server).
#include "protocol/json_in.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

namespace oddsrelay::json {
namespace {

std::string nested_arrays(size_t levels) { return std::string(levels, '[') + std::string(levels, ']'); }

std::string nested_objects(size_t levels) {
  std::string s;
  for (size_t i = 0; i < levels; ++i) s += "{\"a\":";
  s += "1";
  s += std::string(levels, '}');
  return s;
}

InResult parse_text(const std::string& text, const InLimits& l = kRequestLimits) {
  Doc d;
  return parse(text, d, l);
}

TEST(JsonIn, TakesNestingAtTheLimit) {
  Doc d;
  ASSERT_TRUE(parse(nested_arrays(64), d));
  EXPECT_TRUE(d.IsArray());
  EXPECT_TRUE(parse_text(nested_objects(64)));
}

TEST(JsonIn, RefusesNestingOnePastTheLimit) {
  const InResult r = parse_text(nested_arrays(65));
  EXPECT_EQ(r.error, InError::TooDeep);
  EXPECT_TRUE(r.over_limit());
  EXPECT_EQ(r.offset, 64u);  // at the 65th bracket
  EXPECT_EQ(r.message(kRequestLimits), "nested deeper than 64 levels");
  EXPECT_EQ(parse_text(nested_objects(65)).error, InError::TooDeep);
}

// The bodies that crashed the server: refused, on a small stack too (the
// parser holds its state on the heap, whatever the depth).
TEST(JsonIn, NestingBombsAreRefusedNotRecursed) {
  for (size_t levels : {1000u, 110'000u, 1'000'000u}) {
    std::string objects;
    for (size_t i = 0; i < levels; ++i) objects += "{\"a\":";
    EXPECT_EQ(parse_text(objects).error, InError::TooDeep) << levels;
    EXPECT_EQ(parse_text(std::string(levels, '[')).error, InError::TooDeep) << levels;
    EXPECT_EQ(parse_text(nested_arrays(levels)).error, InError::TooDeep) << levels;
  }
}

TEST(JsonIn, ADeeperLimitIsClampedToTheMaximum) {
  InLimits deep;
  deep.depth = 100'000;
  EXPECT_TRUE(parse_text(nested_arrays(kMaxDepth), deep));
  EXPECT_EQ(parse_text(nested_arrays(kMaxDepth + 1), deep).error, InError::TooDeep);
}

TEST(JsonIn, BoundsMembersOfOneObject) {
  InLimits l;
  l.members = 3;
  EXPECT_TRUE(parse_text(R"({"a":1,"b":2,"c":{"x":1,"y":2,"z":3}})", l));
  const InResult r = parse_text(R"({"a":1,"b":2,"c":3,"d":4})", l);
  EXPECT_EQ(r.error, InError::TooManyMembers);
  EXPECT_EQ(r.message(l), "an object with more than 3 keys");
}

TEST(JsonIn, BoundsItemsOfOneArrayContainersIncluded) {
  InLimits l;
  l.items = 3;
  EXPECT_TRUE(parse_text("[1,[2,3,4],{}]", l));
  EXPECT_EQ(parse_text("[1,2,3,4]", l).error, InError::TooManyItems);
  EXPECT_EQ(parse_text("[[],[],[],[]]", l).error, InError::TooManyItems);
  EXPECT_EQ(parse_text("[{},{},{},{}]", l).error, InError::TooManyItems);
  EXPECT_EQ(parse_text("[\"a\",null,true,false]", l).error, InError::TooManyItems);
}

TEST(JsonIn, BoundsStringsAndKeys) {
  InLimits l;
  l.string_bytes = 4;
  EXPECT_TRUE(parse_text(R"({"abcd":"wxyz"})", l));
  EXPECT_EQ(parse_text(R"({"abcde":1})", l).error, InError::StringTooLong);
  const InResult r = parse_text(R"(["vwxyz"])", l);
  EXPECT_EQ(r.error, InError::StringTooLong);
  EXPECT_EQ(r.message(l), "a string longer than 4 bytes");
  // Bytes, not characters: "é" is two.
  EXPECT_EQ(parse_text("[\"\xc3\xa9\xc3\xa9\xc3\xa9\"]", l).error, InError::StringTooLong);
}

TEST(JsonIn, IntegersKeepTheirTypeAndRangeIsChecked) {
  Doc d;
  ASSERT_TRUE(
      parse("[0,-0,4294967295,4294967296,-2147483648,-2147483649,18446744073709551615,"
            "-9223372036854775808]",
            d));
  EXPECT_TRUE(d[0].IsUint() && d[0].IsInt());
  EXPECT_EQ(d[1].GetInt(), 0);
  EXPECT_TRUE(d[2].IsUint());
  EXPECT_FALSE(d[3].IsUint());
  EXPECT_EQ(d[3].GetUint64(), 4294967296u);
  EXPECT_TRUE(d[4].IsInt());
  EXPECT_FALSE(d[5].IsInt());
  EXPECT_EQ(d[5].GetInt64(), -2147483649);
  EXPECT_EQ(d[6].GetUint64(), 18446744073709551615u);
  EXPECT_EQ(d[7].GetInt64(), INT64_MIN);
  // Past 64 bits: refused, never rounded into a double.
  EXPECT_EQ(parse_text("[18446744073709551616]").error, InError::NumberRange);
  EXPECT_EQ(parse_text("[-9223372036854775809]").error, InError::NumberRange);
}

TEST(JsonIn, DecimalsAreExactAndFinite) {
  Doc d;
  ASSERT_TRUE(parse("[1.5,2e3,0.1]", d));
  EXPECT_TRUE(d[0].IsDouble());
  EXPECT_FALSE(d[0].IsInt());  // a price of 1.5 is no integer price
  EXPECT_EQ(d[1].GetDouble(), 2000.0);
  EXPECT_EQ(d[2].GetDouble(), 0.1);
  EXPECT_EQ(parse_text("[1e999]").error, InError::NumberRange);
  EXPECT_EQ(parse_text("[-1e999]").error, InError::NumberRange);
  const InResult r = parse_text("[1." + std::string(40, '1') + "]");
  EXPECT_EQ(r.error, InError::NumberTooLong);
  EXPECT_EQ(r.message(kRequestLimits), "a number longer than 32 characters");
}

TEST(JsonIn, NaNAndInfinityAreNamed) {
  for (const char* t : {"[NaN]", "[Infinity]", "[-Infinity]", R"({"a":NaN})"}) {
    const InResult r = parse_text(t);
    EXPECT_EQ(r.error, InError::NotFinite) << t;
    EXPECT_EQ(r.message(kRequestLimits), "NaN and Infinity are not JSON");
  }
  EXPECT_EQ(parse_text("[Nope]").error, InError::Syntax);
}

TEST(JsonIn, InvalidUtf8IsRefused) {
  EXPECT_EQ(parse_text("[\"\xff\"]").error, InError::InvalidUtf8);
  EXPECT_EQ(parse_text("{\"\xc3\":1}").error, InError::InvalidUtf8);
  EXPECT_EQ(parse_text("[\"\xed\xa0\x80\"]").error, InError::InvalidUtf8);  // a surrogate
  EXPECT_TRUE(parse_text("[\"\xe2\x82\xac\"]"));
}

// Escapes that name a surrogate alone decode to no character: refused as
// the raw bytes are, as a value and as a key, and not echoed by an answer.
TEST(JsonIn, ALoneSurrogateEscapeIsRefusedAsInvalidUtf8) {
  EXPECT_EQ(parse_text(R"(["\udc00x"])").error, InError::InvalidUtf8);
  EXPECT_EQ(parse_text(R"(["bm1_\udfff"])").error, InError::InvalidUtf8);
  EXPECT_EQ(parse_text(R"({"\udc00":1})").error, InError::InvalidUtf8);
  EXPECT_EQ(parse_text(R"(["\ud800"])").error, InError::InvalidUtf8);
  EXPECT_EQ(parse_text(R"(["\ud800x"])").message(kRequestLimits), "invalid UTF-8 in a string");
  EXPECT_TRUE(parse_text(R"(["\ud83d\ude00", "\u00ed\u00a0"])"));  // a pair; and U+00ED, U+00A0
}

TEST(JsonIn, DuplicateKeysAreRefusedWhereTheLimitsSay) {
  const InResult r = parse_text(R"({"a":1,"b":{"x":1,"x":2}})");
  EXPECT_EQ(r.error, InError::DuplicateKey);
  EXPECT_EQ(r.detail, "x");
  EXPECT_EQ(r.message(kRequestLimits), "duplicate key \"x\"");
  EXPECT_EQ(parse_text(R"([{"a":1},{"b":1,"c":2,"d":3,"e":4,"b":5}])").error, InError::DuplicateKey);
  EXPECT_TRUE(parse_text(R"([{"a":1},{"a":2}])"));  // one key in two objects
  EXPECT_TRUE(parse_text(R"({"a":1,"a":2})", kFeedLimits));
}

TEST(JsonIn, SyntaxErrorsSayWhereAndWhat) {
  const InResult r = parse_text(R"({"a":1,})");
  EXPECT_EQ(r.error, InError::Syntax);
  EXPECT_FALSE(r.over_limit());
  EXPECT_EQ(r.offset, 7u);
  EXPECT_EQ(r.message(kRequestLimits).rfind("invalid JSON at offset 7: ", 0), 0u);
  EXPECT_EQ(parse_text("{} x").error, InError::Syntax);  // one value, then only whitespace
  EXPECT_EQ(parse_text("").error, InError::Syntax);
  EXPECT_EQ(parse_text(std::string("[1]\0", 4)).error, InError::Syntax);
  // A byte-order mark is not JSON, nor a lone byte of one (RapidJSON's
  // encoded stream skipped either; the in-situ path did not).
  EXPECT_EQ(parse_text("\xef\xbb\xbf[1]").error, InError::Syntax);
  EXPECT_EQ(parse_text("\xef[1]").error, InError::Syntax);
}

TEST(JsonIn, ARefusalLeavesTheDocumentNullAndItIsReusable) {
  Doc d;
  ASSERT_TRUE(parse("[1,2]", d));
  EXPECT_FALSE(parse(nested_arrays(100), d));
  EXPECT_TRUE(d.IsNull());
  ASSERT_TRUE(parse(R"({"k":"v"})", d));
  EXPECT_STREQ(d["k"].GetString(), "v");
}

TEST(JsonIn, InSituParsesIntoPools) {
  rapidjson::MemoryPoolAllocator<> values, stack;
  std::string text = R"({"op":"market","at":12,"lines":{"2.5":{"s":1}}})";
  PoolDoc d(&values, 1024, &stack);
  ASSERT_TRUE(parse_insitu(text.data(), d, kFeedLimits));
  EXPECT_STREQ(d["op"].GetString(), "market");
  EXPECT_EQ(d["at"].GetInt(), 12);
  std::string bomb = std::string(200'000, '[');
  PoolDoc d2(&values, 1024, &stack);
  EXPECT_EQ(parse_insitu(bomb.data(), d2, kFeedLimits).error, InError::TooDeep);
  std::string nan = "[NaN]";
  EXPECT_EQ(parse_insitu(nan.data(), d2, kFeedLimits).error, InError::NotFinite);
}

// A line that ends inside a multi-byte character: RapidJSON's own in-situ
// stream read past the terminating NUL here (the json_in fuzz target, under
// ASan). The buffer is exactly the text and its NUL, so ASan sees any byte
// read beyond it.
TEST(JsonIn, InSituStopsAtTheEndOfATruncatedCharacter) {
  rapidjson::MemoryPoolAllocator<> values, stack;
  for (std::string text : {"[\"\xec", "[\"\xf0\x9f", "{\"\xe2\x82", "[\"ok\",\"\xc3"}) {
    std::unique_ptr<char[]> buf(new char[text.size() + 1]);
    std::memcpy(buf.get(), text.c_str(), text.size() + 1);
    PoolDoc d(&values, 1024, &stack);
    EXPECT_EQ(parse_insitu(buf.get(), d, kFeedLimits).error, InError::InvalidUtf8) << text;
  }
}

}  // namespace
}  // namespace oddsrelay::json
