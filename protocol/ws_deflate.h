// permessage-deflate (RFC 7692), without I/O: the offer a server accepts,
// the compression of a whole message for a frame with RSV1 set, and the
// inflation of a client's compressed message under the message limit.
//
// The relay negotiates no context takeover in either direction, so every
// message is compressed and decompressed alone: the compressed copy of a
// frame is the same bytes for every subscriber, made once (relay/outbox.h)
// and shared as the frame itself is. Raw DEFLATE (zlib, window 2^15), each
// message flushed with Z_SYNC_FLUSH and its trailing 00 00 ff ff removed
// (RFC 7692 7.2.1); the receiver appends them back before inflating.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "protocol/ws_frame.h"

struct z_stream_s;

namespace oddsrelay::ws {

// The server's answer to an accepted offer, the Sec-WebSocket-Extensions
// value of the 101.
inline constexpr std::string_view kDeflateResponse =
    "permessage-deflate; server_no_context_takeover; client_no_context_takeover";
// Payloads under this many bytes go out uncompressed (RSV1 clear): they
// would save a few bytes for a compressor's setup. Not higher: the INFOs
// (about 110 bytes) are 80% of the frames and 40% of the bytes of a
// /pt-ws stream, and compress by half (docs/architecture.md).
inline constexpr size_t kDeflateMinPayload = 64;
// The header bit of a compressed message (its first frame).
inline constexpr uint8_t kRsv1 = 0x40;
// zlib's level for server messages (zlib's default): on /pt-ws frames
// level 1 sends 3% more bytes, level 9 none fewer. A frame is compressed
// once per loop, whatever the number of streams, so the level costs little.
inline constexpr int kDeflateLevel = 6;

// True if a Sec-WebSocket-Extensions value holds a permessage-deflate
// offer that kDeflateResponse answers: its parameters among
// server_no_context_takeover, client_no_context_takeover and
// client_max_window_bits (any value: the server inflates with the largest
// window); one asking server_max_window_bits is declined, as is one with an
// unknown or repeated parameter. Several offers: any acceptable one.
bool deflate_offer_acceptable(std::string_view extensions);

// One message at a time, no context kept between messages.
class Deflater {
 public:
  explicit Deflater(int level = kDeflateLevel);
  ~Deflater();
  Deflater(const Deflater&) = delete;
  Deflater& operator=(const Deflater&) = delete;
  // Appends `in` compressed alone, without the trailing 00 00 ff ff.
  void compress(std::string_view in, std::string& out);
  // Appends a whole final frame of `op` carrying `payload` compressed,
  // RSV1 set.
  void append_frame(std::string& out, Opcode op, std::string_view payload);

 private:
  std::unique_ptr<z_stream_s> z_;
};

class Inflater {
 public:
  enum class Result { Ok, TooBig, Corrupt };
  Inflater();
  ~Inflater();
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
  // Replaces `out` with the message `in` (one compressed message, its
  // trailing 00 00 ff ff removed) inflated alone; TooBig as soon as the
  // output would pass `limit` bytes (no more is inflated: a deflate bomb
  // costs at most `limit` bytes), Corrupt if `in` is not DEFLATE.
  Result inflate(std::string_view in, size_t limit, std::string& out);

 private:
  std::unique_ptr<z_stream_s> z_;
};

}  // namespace oddsrelay::ws
