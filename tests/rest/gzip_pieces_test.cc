// Pieces deflated apart and assembled (rest/gzip_pieces.h) make one gzip
// member that zlib inflates, CRC and length checked, to the pieces' bytes
// in order.
#include "rest/gzip_pieces.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <vector>

namespace oddsrelay::rest {
namespace {

// Inflates a gzip member; false unless it ends cleanly (trailer verified).
bool gunzip(const std::string& gz, std::string& out) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) return false;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  char buf[4096];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
  }
  const bool whole = rc == Z_STREAM_END && z.avail_in == 0;
  inflateEnd(&z);
  return whole;
}

TEST(GzipPieces, AssembledPiecesInflateToTheirConcatenation) {
  std::mt19937 rng(7);
  std::vector<std::string> parts = {"{\"success\":true,\"data\":{", "", ","};
  for (int i = 0; i < 50; ++i) {
    std::string p = "\"s7-101." + std::to_string(5000 + i) + "\":{";
    const size_t n = rng() % 3000;
    for (size_t j = 0; j < n; ++j) p += static_cast<char>(j % 7 ? '0' + rng() % 10 : '"');
    parts.push_back(p + "}");
  }
  parts.push_back("}}");
  std::string expected, gz;
  GzipAssembler a(gz);
  for (const auto& p : parts) {
    DeflatePiece piece;
    ASSERT_TRUE(deflate_piece(p, piece));
    EXPECT_EQ(piece.len, p.size());
    a.add(piece);
    expected += p;
  }
  a.finish();
  std::string got;
  ASSERT_TRUE(gunzip(gz, got));
  EXPECT_EQ(got, expected);
  EXPECT_LT(gz.size(), expected.size());  // it did compress
}

TEST(GzipPieces, APieceIsReusableInAnyAnswer) {
  DeflatePiece x, y;
  ASSERT_TRUE(deflate_piece("xxxxxxxxxxxxxxxxxxxx-one", x));
  ASSERT_TRUE(deflate_piece("yyyy-two", y));
  for (const auto& order : std::vector<std::vector<const DeflatePiece*>>{{&x, &y}, {&y, &x, &x}, {&y}, {}}) {
    std::string gz, got, expected;
    GzipAssembler a(gz);
    for (const DeflatePiece* p : order) {
      a.add(*p);
      expected += p == &x ? "xxxxxxxxxxxxxxxxxxxx-one" : "yyyy-two";
    }
    a.finish();
    ASSERT_TRUE(gunzip(gz, got));
    EXPECT_EQ(got, expected);
  }
}

TEST(GzipPieces, AWrongCrcIsRefusedByTheReader) {
  // The trailer is what a client checks: a piece whose CRC does not match
  // its bytes makes the whole answer unreadable, so the test above proves
  // the combined CRC, not just the deflate stream.
  DeflatePiece x;
  ASSERT_TRUE(deflate_piece("some bytes", x));
  x.crc ^= 1;
  std::string gz, got;
  GzipAssembler a(gz);
  a.add(x);
  a.finish();
  EXPECT_FALSE(gunzip(gz, got));
}

}  // namespace
}  // namespace oddsrelay::rest
