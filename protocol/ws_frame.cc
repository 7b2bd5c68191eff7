#include "protocol/ws_frame.h"

#include <openssl/evp.h>

namespace oddsrelay::ws {

size_t write_frame_header(char* out, Opcode op, size_t len) {
  auto* o = reinterpret_cast<unsigned char*>(out);
  o[0] = static_cast<unsigned char>(0x80 | op);
  if (len < 126) {
    o[1] = static_cast<unsigned char>(len);
    return 2;
  }
  if (len < 65536) {
    o[1] = 126;
    o[2] = static_cast<unsigned char>(len >> 8);
    o[3] = static_cast<unsigned char>(len);
    return 4;
  }
  o[1] = 127;
  for (int i = 0; i < 8; ++i) o[2 + i] = static_cast<unsigned char>(static_cast<uint64_t>(len) >> (56 - 8 * i));
  return 10;
}

void append_frame(std::string& out, Opcode op, std::string_view payload) {
  char head[10];
  out.append(head, write_frame_header(head, op, payload.size()));
  out.append(payload);
}

void append_close(std::string& out, uint16_t code, std::string_view reason) {
  std::string p;
  p += static_cast<char>(code >> 8);
  p += static_cast<char>(code & 0xff);
  p += reason.substr(0, 123);
  // Cutting at 123 bytes may split a UTF-8 sequence: drop a partial tail.
  while (p.size() > 2 && !valid_utf8(std::string_view(p).substr(2))) p.pop_back();
  append_frame(out, kClose, p);
}

std::optional<ServerFrame> read_server_frame(std::string_view buf) {
  if (buf.size() < 2) return std::nullopt;
  const auto* b = reinterpret_cast<const unsigned char*>(buf.data());
  uint64_t len = b[1] & 0x7f;
  size_t head = 2;
  if (len == 126) {
    if (buf.size() < 4) return std::nullopt;
    len = (uint64_t{b[2]} << 8) | b[3];
    head = 4;
  } else if (len == 127) {
    if (buf.size() < 10) return std::nullopt;
    len = 0;
    for (int i = 2; i < 10; ++i) len = (len << 8) | b[i];
    head = 10;
  }
  if (buf.size() - head < len) return std::nullopt;
  return ServerFrame{(b[0] & 0x80) != 0, (b[0] & 0x40) != 0, static_cast<Opcode>(b[0] & 0x0f), buf.substr(head, len),
                     head + len};
}

void append_client_frame(std::string& out, Opcode op, std::string_view payload, uint32_t mask) {
  char head[14];
  size_t n = write_frame_header(head, op, payload.size());
  head[1] = static_cast<char>(head[1] | 0x80);
  for (int i = 0; i < 4; ++i) head[n + i] = static_cast<char>(mask >> (24 - 8 * i));
  out.append(head, n + 4);
  const size_t at = out.size();
  out.append(payload);
  for (size_t i = 0; i < payload.size(); ++i) out[at + i] = static_cast<char>(out[at + i] ^ head[n + (i & 3)]);
}

std::string accept_key(std::string_view client_key) {
  // A valid key is 16 random bytes in base64: 24 characters ending "==".
  if (client_key.size() != 24 || client_key.substr(22) != "==") return {};
  for (char c : client_key.substr(0, 22))  // base64's alphabet, not the locale's letters
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/'))
      return {};
  std::string in(client_key);
  in += "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
  unsigned char digest[20];
  unsigned int n = 0;
  if (EVP_Digest(in.data(), in.size(), digest, &n, EVP_sha1(), nullptr) != 1) return {};
  unsigned char b64[32];
  int m = EVP_EncodeBlock(b64, digest, 20);
  return std::string(reinterpret_cast<char*>(b64), static_cast<size_t>(m));
}

std::string client_key(uint64_t a, uint64_t b) {
  unsigned char raw[16];
  for (int i = 0; i < 8; ++i) {
    raw[i] = static_cast<unsigned char>(a >> (8 * i));
    raw[8 + i] = static_cast<unsigned char>(b >> (8 * i));
  }
  unsigned char b64[32];
  const int m = EVP_EncodeBlock(b64, raw, 16);
  return std::string(reinterpret_cast<char*>(b64), static_cast<size_t>(m));
}

}  // namespace oddsrelay::ws
