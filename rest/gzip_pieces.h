// gzip answers assembled from pieces compressed once each. A piece is its
// own raw deflate stream ended with a sync flush (byte-aligned, not final),
// so pieces concatenate into one valid deflate stream; the assembler adds
// the gzip header, an empty final block, and the trailer's CRC-32 (combined
// from the pieces' CRCs) and length. GET /v1/odds keeps one piece per event
// version (rest/odds_cache.h): an answer of 100 events costs 100 copies,
// not a compression of the whole body per request.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace oddsrelay::rest {

struct DeflatePiece {
  std::string raw;       // raw deflate, sync-flushed
  uint32_t crc = 0;      // CRC-32 of the plain bytes
  unsigned long op = 0;  // zlib's crc32_combine_op operator for their length
  uint64_t len = 0;      // plain bytes
};

// Compresses `in` into `out`; false on a zlib failure.
bool deflate_piece(std::string_view in, DeflatePiece& out, int level = 1);

// One gzip member appended to `out`: begin, add pieces in order, finish.
class GzipAssembler {
 public:
  explicit GzipAssembler(std::string& out);
  void add(const DeflatePiece& p);
  void finish();

 private:
  std::string& out_;
  unsigned long crc_ = 0;
  uint64_t len_ = 0;
};

}  // namespace oddsrelay::rest
