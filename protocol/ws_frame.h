// WebSocket framing, server side (RFC 6455 section 5), without I/O: a parser
// that turns a connection's received bytes into messages and control
// frames for a handler, and encoders for the frames the server sends. The
// parser is a template over the handler, so the relay, the tests and the
// fuzzer drive the same code.
//
// Rules enforced, each with its close code: client frames must be masked
// (1002); no RSV bits (1002) but RSV1 on the first frame of a data message
// once permessage-deflate is negotiated (set_inflater; protocol/ws_deflate.h),
// whose message is inflated whole, max_message applying after inflation
// (1009; not DEFLATE: 1007); known opcodes
// only (1002); control frames unfragmented with at most 125 bytes (1002);
// continuation only inside a fragmented message and no new data frame
// before it ends (1002); a message over max_message bytes (1009); text
// that is not UTF-8 (1007); a close payload of one byte, an invalid code,
// or a reason that is not UTF-8 (1002 / 1007).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/utf8.h"

namespace oddsrelay::ws {

class Inflater;

enum Opcode : uint8_t { kContinuation = 0, kText = 1, kBinary = 2, kClose = 8, kPing = 9, kPong = 10 };

enum CloseCode : uint16_t {
  kNormal = 1000,
  kGoingAway = 1001,
  kProtocolError = 1002,
  kInvalidPayload = 1007,
  kPolicyViolation = 1008,
  kMessageTooBig = 1009,
  kInternalError = 1011,
  kServiceRestart = 1012,
  kNoStatus = 1005,  // reported when a close frame carries no code; never sent
};

// Codes a peer may put in a close frame (RFC 6455 7.4, IANA registry).
[[nodiscard]] inline bool valid_close_code(uint32_t c) {
  return (c >= 1000 && c <= 1003) || (c >= 1007 && c <= 1014) || (c >= 3000 && c <= 4999);
}

// Inflates a compressed message (RSV1) into `out`: 0, or the close code
// (kMessageTooBig past `limit` bytes, kInvalidPayload if not DEFLATE).
// Defined in ws_deflate.cc.
uint16_t inflate_message(Inflater& inf, std::string_view in, size_t limit, std::string& out);
// How far the compressed bytes of a message may pass max_message.
inline constexpr size_t kDeflateSlack = 1024;

// Handler interface (duck-typed):
//   void on_message(Opcode op, std::string_view payload);   // kText or kBinary, whole
//   void on_ping(std::string_view payload);
//   void on_pong(std::string_view payload);
//   void on_close(uint16_t code, std::string_view reason);  // code kNoStatus if none
//   void on_error(uint16_t close_code, const char* reason); // then stop feeding
class FrameParser {
 public:
  explicit FrameParser(size_t max_message = 64 * 1024) : max_message_(max_message) {}

  // Consumes every complete frame at the front of `buf` (payloads unmasked
  // in place) and returns how many bytes it used; the rest is an
  // incomplete frame to be fed again with more bytes. After on_error or
  // on_close nothing more is consumed.
  template <class Handler>
  size_t feed(char* buf, size_t len, Handler& h);

  bool done() const { return done_; }
  // permessage-deflate negotiated: RSV1 marks a compressed message.
  void set_inflater(Inflater* i) { inflater_ = i; }

 private:
  size_t max_message_;
  Inflater* inflater_ = nullptr;
  bool compressed_ = false;            // the message in progress came with RSV1
  std::string inflated_;               // a compressed message, inflated
  std::string message_;                // fragments of the message in progress
  Opcode message_op_ = kContinuation;  // kContinuation: none in progress
  bool done_ = false;
};

template <class Handler>
size_t FrameParser::feed(char* buf, size_t len, Handler& h) {
  size_t pos = 0;
  auto fail = [&](uint16_t code, const char* why) {
    done_ = true;
    h.on_error(code, why);
    return pos;
  };
  while (!done_ && len - pos >= 2) {
    const auto* b = reinterpret_cast<unsigned char*>(buf + pos);
    const bool fin = b[0] & 0x80;
    const uint8_t rsv = b[0] & 0x70, op = b[0] & 0x0f;
    const bool masked = b[1] & 0x80;
    uint64_t plen = b[1] & 0x7f;
    size_t head = 2;
    if (plen == 126) {
      if (len - pos < 4) break;
      plen = (uint64_t{b[2]} << 8) | b[3];
      head = 4;
    } else if (plen == 127) {
      if (len - pos < 10) break;
      plen = 0;
      for (int i = 2; i < 10; ++i) plen = (plen << 8) | b[i];
      head = 10;
    }
    const bool data_start = op == kText || op == kBinary;
    if (rsv & ~(inflater_ && data_start ? 0x40 : 0)) return fail(kProtocolError, "reserved bits set");
    // Compressed bytes may pass the limit a little (stored blocks); the
    // inflated message may not.
    const bool deflated = data_start ? rsv != 0 : compressed_;
    const size_t cap = deflated ? max_message_ + kDeflateSlack : max_message_;
    if (!masked) return fail(kProtocolError, "client frames must be masked");
    const bool control = op & 0x8;
    if (op != kContinuation && op != kText && op != kBinary && op != kClose && op != kPing && op != kPong)
      return fail(kProtocolError, "unknown opcode");
    if (control && (!fin || plen > 125))
      return fail(kProtocolError, "control frames must be whole and at most 125 bytes");
    if (!control && plen > cap) return fail(kMessageTooBig, "message too big");
    if (!control) {
      if (op == kContinuation && message_op_ == kContinuation)
        return fail(kProtocolError, "continuation without a message");
      if (op != kContinuation && message_op_ != kContinuation)
        return fail(kProtocolError, "new message inside a fragmented one");
      if (message_.size() + plen > cap) return fail(kMessageTooBig, "message too big");
    }
    if (len - pos < head + 4 + plen) break;  // wait for the whole frame
    const unsigned char* mask = b + head;
    char* payload = buf + pos + head + 4;
    for (uint64_t i = 0; i < plen; ++i) payload[i] = static_cast<char>(payload[i] ^ mask[i & 3]);
    std::string_view data(payload, plen);
    pos += head + 4 + plen;

    switch (op) {
      case kPing:
        h.on_ping(data);
        break;
      case kPong:
        h.on_pong(data);
        break;
      case kClose: {
        if (plen == 1) return fail(kProtocolError, "close payload of one byte");
        uint16_t code = kNoStatus;
        std::string_view reason;
        if (plen >= 2) {
          code =
              static_cast<uint16_t>((static_cast<unsigned char>(data[0]) << 8) | static_cast<unsigned char>(data[1]));
          reason = data.substr(2);
          if (!valid_close_code(code)) return fail(kProtocolError, "invalid close code");
          if (!valid_utf8(reason)) return fail(kInvalidPayload, "close reason is not UTF-8");
        }
        done_ = true;
        h.on_close(code, reason);
        return pos;
      }
      default: {
        if (op != kContinuation) {
          message_op_ = static_cast<Opcode>(op);
          compressed_ = deflated;
        }
        std::string_view whole = data;  // the common case: one whole frame, no copy
        if (!fin || !message_.empty()) {
          message_.append(data);
          if (!fin) break;
          whole = message_;
        }
        if (compressed_) {
          if (uint16_t code = inflate_message(*inflater_, whole, max_message_, inflated_))
            return fail(code, code == kMessageTooBig ? "message too big" : "compressed message is not DEFLATE");
          whole = inflated_;
        }
        if (message_op_ == kText && !valid_utf8(whole)) return fail(kInvalidPayload, "text message is not UTF-8");
        Opcode mop = message_op_;
        message_op_ = kContinuation;
        h.on_message(mop, whole);
        message_.clear();
      }
    }
  }
  return pos;
}

// Server frames are never masked. Header size for a payload of `len`.
[[nodiscard]] constexpr size_t frame_header_size(size_t len) { return len < 126 ? 2 : len < 65536 ? 4 : 10; }

// The payload of a whole, unmasked server frame (its header skipped).
[[nodiscard]] inline std::string_view frame_payload(std::string_view frame) {
  const unsigned len7 = static_cast<unsigned char>(frame[1]) & 0x7f;
  return frame.substr(len7 == 127 ? 10 : len7 == 126 ? 4 : 2);
}

// Writes the header of a final frame into `out` (frame_header_size bytes);
// returns its size. The relay writes header and payload into one shared
// buffer, once per frame, for every subscriber.
size_t write_frame_header(char* out, Opcode op, size_t len);

// Appends a whole frame to `out`.
void append_frame(std::string& out, Opcode op, std::string_view payload);
// Appends a close frame with a code and a reason (cut to fit 125 bytes).
void append_close(std::string& out, uint16_t code, std::string_view reason);

// Client side (tools/oddsload, clients/cpp): the frames a server sends
// are never masked; a client's always are.
struct ServerFrame {
  bool fin;
  bool rsv1;  // compressed (permessage-deflate), on a message's first frame
  Opcode op;
  std::string_view payload;
  size_t size;  // header and payload: where the next frame starts
};
// The whole server frame at the front of `buf`; nullopt until it is all there.
[[nodiscard]] std::optional<ServerFrame> read_server_frame(std::string_view buf);
// Appends a final client frame masked with `mask` (RFC 6455 5.3).
void append_client_frame(std::string& out, Opcode op, std::string_view payload, uint32_t mask);

// Sec-WebSocket-Accept for a client's Sec-WebSocket-Key (SHA-1 + base64,
// RFC 6455 4.2.2). Empty if the key is not 16 bytes of base64.
std::string accept_key(std::string_view client_key);
// A client's Sec-WebSocket-Key: 16 bytes (from two random words) in base64.
std::string client_key(uint64_t a, uint64_t b);

}  // namespace oddsrelay::ws
