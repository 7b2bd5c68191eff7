#include "rest/gzip_pieces.h"

#include <zlib.h>

namespace oddsrelay::rest {

bool deflate_piece(std::string_view in, DeflatePiece& out, int level) {
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) return false;
  // deflateBound covers a finished stream; a sync flush adds its empty
  // stored block (at most 5 bytes) and a partial byte.
  out.raw.resize(deflateBound(&z, static_cast<uLong>(in.size())) + 16);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.raw.data());
  z.avail_out = static_cast<uInt>(out.raw.size());
  const int rc = deflate(&z, Z_SYNC_FLUSH);
  const bool ok = rc == Z_OK && z.avail_in == 0 && z.avail_out > 0;
  out.raw.resize(z.total_out);
  deflateEnd(&z);
  if (!ok) return false;
  out.len = in.size();
  out.crc = static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(in.data()), static_cast<uInt>(in.size())));
  out.op = crc32_combine_gen(static_cast<z_off_t>(in.size()));
  return true;
}

GzipAssembler::GzipAssembler(std::string& out) : out_(out) {
  // ID1 ID2, deflate, no flags, no mtime, no extra flags, OS unknown.
  static constexpr char kHeader[10] = {'\x1f', '\x8b', 8, 0, 0, 0, 0, 0, 0, '\xff'};
  out_.append(kHeader, sizeof kHeader);
}

void GzipAssembler::add(const DeflatePiece& p) {
  out_ += p.raw;
  crc_ = crc32_combine_op(crc_, p.crc, p.op);
  len_ += p.len;
}

void GzipAssembler::finish() {
  out_.append("\x03\x00", 2);  // an empty final block (fixed Huffman: BFINAL, BTYPE 01, end of block)
  for (int i = 0; i < 4; ++i) out_ += static_cast<char>((crc_ >> (8 * i)) & 0xff);
  for (int i = 0; i < 4; ++i) out_ += static_cast<char>((len_ >> (8 * i)) & 0xff);
}

}  // namespace oddsrelay::rest
