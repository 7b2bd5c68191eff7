// permessage-deflate framing and offers (ws_deflate.h).
#include "protocol/ws_deflate.h"

#include <zlib.h>

#include "protocol/http_request.h"

namespace oddsrelay::ws {

namespace {

using http::trim_ows;

// One offer: "permessage-deflate; p1; p2=v".
bool offer_acceptable(std::string_view offer) {
  size_t semi = offer.find(';');
  if (!http::iequals(trim_ows(offer.substr(0, semi)), "permessage-deflate")) return false;
  unsigned seen = 0;
  while (semi != std::string_view::npos) {
    offer.remove_prefix(semi + 1);
    semi = offer.find(';');
    std::string_view p = trim_ows(offer.substr(0, semi));
    const std::string_view name = trim_ows(p.substr(0, p.find('=')));
    unsigned bit = 0;
    if (http::iequals(name, "server_no_context_takeover"))
      bit = 1;
    else if (http::iequals(name, "client_no_context_takeover"))
      bit = 2;
    else if (http::iequals(name, "client_max_window_bits"))
      bit = 4;
    if (bit == 0 || (seen & bit)) return false;  // server_max_window_bits, unknown, or repeated
    seen |= bit;
  }
  return true;
}

}  // namespace

bool deflate_offer_acceptable(std::string_view extensions) {
  while (!extensions.empty()) {
    const size_t c = extensions.find(',');
    if (offer_acceptable(extensions.substr(0, c))) return true;
    if (c == std::string_view::npos) break;
    extensions.remove_prefix(c + 1);
  }
  return false;
}

Deflater::Deflater(int level) : z_(std::make_unique<z_stream_s>()) {
  // memLevel 4: a 4 KiB hash table, which deflateReset clears for every
  // message (memLevel 8: 64 KiB); as small on /pt-ws frames, which are a
  // few hundred bytes.
  deflateInit2(z_.get(), level, Z_DEFLATED, -15, 4, Z_DEFAULT_STRATEGY);
}
Deflater::~Deflater() { deflateEnd(z_.get()); }

void Deflater::compress(std::string_view in, std::string& out) {
  z_stream_s& z = *z_;
  deflateReset(&z);  // no context takeover: each message alone
  const size_t start = out.size();
  // Sync flush adds at most the empty stored block (5 bytes) past the bound.
  out.resize(start + deflateBound(&z, static_cast<uLong>(in.size())) + 16);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data() + start);
  z.avail_out = static_cast<uInt>(out.size() - start);
  deflate(&z, Z_SYNC_FLUSH);
  // Shrinking: erase, not resize, which GCC's LTO takes for a growth by
  // up to 4 GiB (-Wstringop-overflow).
  out.erase(out.size() - z.avail_out);
  if (out.size() - start >= 4 && std::string_view(out).substr(out.size() - 4) == std::string_view("\0\0\xff\xff", 4))
    out.resize(out.size() - 4);
}

void Deflater::append_frame(std::string& out, Opcode op, std::string_view payload) {
  std::string body;
  compress(payload, body);
  char head[10];
  const size_t n = write_frame_header(head, op, body.size());
  head[0] = static_cast<char>(head[0] | kRsv1);  // RSV1: a compressed message
  out.append(head, n);
  out.append(body);
}

Inflater::Inflater() : z_(std::make_unique<z_stream_s>()) { inflateInit2(z_.get(), -15); }
Inflater::~Inflater() { inflateEnd(z_.get()); }

Inflater::Result Inflater::inflate(std::string_view in, size_t limit, std::string& out) {
  static constexpr char kTail[4] = {0, 0, '\xff', '\xff'};
  z_stream_s& z = *z_;
  inflateReset(&z);  // no context takeover: each message alone
  out.clear();
  char buf[16 * 1024];
  for (std::string_view part : {in, std::string_view(kTail, 4)}) {
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(part.data()));
    z.avail_in = static_cast<uInt>(part.size());
    for (;;) {  // each round consumes input or yields output, both bounded
      z.next_out = reinterpret_cast<Bytef*>(buf);
      z.avail_out = sizeof buf;
      const uInt before = z.avail_in;
      const int rc = ::inflate(&z, Z_SYNC_FLUSH);
      const size_t got = sizeof buf - z.avail_out;
      if (out.size() + got > limit) return Result::TooBig;
      out.append(buf, got);
      if (rc == Z_STREAM_END) return Result::Ok;  // a final block: what follows is ignored
      if (rc != Z_OK && rc != Z_BUF_ERROR) return Result::Corrupt;
      if ((z.avail_in == 0 && z.avail_out != 0) || (got == 0 && z.avail_in == before)) break;
    }
  }
  return Result::Ok;
}

uint16_t inflate_message(Inflater& inf, std::string_view in, size_t limit, std::string& out) {
  switch (inf.inflate(in, limit, out)) {
    case Inflater::Result::Ok:
      return 0;
    case Inflater::Result::TooBig:
      return kMessageTooBig;
    case Inflater::Result::Corrupt:
      break;
  }
  return kInvalidPayload;
}

}  // namespace oddsrelay::ws
