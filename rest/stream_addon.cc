#include "rest/stream_addon.h"

#include <stdexcept>

#include <openssl/crypto.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

namespace oddsrelay::rest {

StreamSigner::StreamSigner() {
  unsigned char raw[32];
  if (RAND_bytes(raw, sizeof raw) != 1) throw std::runtime_error("no randomness for the stream secret");
  secret_.assign(reinterpret_cast<char*>(raw), sizeof raw);
}

std::string StreamSigner::sign(std::string_view event, std::string_view key, int64_t exp) const {
  std::string msg(event);
  msg += '|';
  msg += key;
  msg += '|';
  msg += std::to_string(exp);
  unsigned char mac[32];
  unsigned int n = 0;
  HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()), reinterpret_cast<const unsigned char*>(msg.data()),
       msg.size(), mac, &n);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < n; ++i) {
    out += hex[mac[i] >> 4];
    out += hex[mac[i] & 15];
  }
  return out;
}

StreamSigner::Check StreamSigner::verify(std::string_view event, std::string_view key, int64_t exp, std::string_view sig,
                                         int64_t now_s) const {
  const std::string want = sign(event, key, exp);
  if (sig.size() != want.size() || CRYPTO_memcmp(sig.data(), want.data(), want.size()) != 0) return Check::BadSignature;
  return now_s > exp ? Check::Expired : Check::Ok;
}

}  // namespace oddsrelay::rest
