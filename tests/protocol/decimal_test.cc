// put_decimal (protocol/decimal.h) writes what std::to_chars writes, for
// every integer type the texts use, across each of its digit-count
// boundaries (where the table's branches meet) and the types' extremes.
#include "protocol/decimal.h"

#include <gtest/gtest.h>

#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace oddsrelay {
namespace {

template <class Int>
void expect_as_to_chars(Int v) {
  char mine[kMaxDecimal + 1], theirs[kMaxDecimal + 1];
  const std::string a(mine, put_decimal(mine, v));
  const std::string b(theirs, std::to_chars(theirs, theirs + sizeof theirs, v).ptr);
  EXPECT_EQ(a, b) << "value " << b;
}

template <class Int>
void expect_type() {
  using L = std::numeric_limits<Int>;
  std::vector<Int> vs = {L::min(), L::max(), 0, 1};
  for (long long v : {9ll, 10ll, 11ll, 42ll, 99ll, 100ll, 101ll, 104ll, 999ll, 1000ll, 1001ll, 2001ll, 9999ll, 10000ll,
                      10001ll, 99999ll, 100000ll, 1767225600000ll})
    for (long long s : {1ll, -1ll})
      if (s * v >= static_cast<long long>(L::min()) &&
          (s * v < 0 || static_cast<unsigned long long>(s * v) <= static_cast<unsigned long long>(L::max())))
        vs.push_back(static_cast<Int>(s * v));
  for (Int v : vs) expect_as_to_chars(v);
}

TEST(Decimal, WritesWhatToCharsWritesForEveryType) {
  expect_type<uint8_t>();
  expect_type<uint32_t>();
  expect_type<int32_t>();
  expect_type<uint64_t>();
  expect_type<int64_t>();
}

TEST(Decimal, EveryValueUnderTenThousandAndAroundIt) {
  for (uint32_t v = 0; v <= 10100; ++v) expect_as_to_chars(v);
  for (int32_t v = -200; v <= 10100; ++v) expect_as_to_chars(v);
}

TEST(Decimal, AnIntegerTypesRoomIsItsWidestText) {
  EXPECT_EQ(kDecimalDigits<uint32_t>, 10u);  // 4294967295
  EXPECT_EQ(kDecimalDigits<int32_t>, 11u);   // -2147483648
  EXPECT_EQ(kDecimalDigits<int64_t>, 20u);   // -9223372036854775808
  EXPECT_EQ(kDecimalDigits<uint64_t>, 20u);  // 18446744073709551615
}

}  // namespace
}  // namespace oddsrelay
