#include "rest/stream_addon.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <stdexcept>

#include "protocol/hmac.h"

namespace oddsrelay::rest {

std::string stream_base(const PublicUrl& pub, std::string_view host) {
  if (pub.set()) return pub.base;
  return host.empty() ? std::string() : "http://" + std::string(host);
}

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
  return hmac_sha256_hex(secret_, msg);
}

StreamSigner::Check StreamSigner::verify(std::string_view event, std::string_view key, int64_t exp,
                                         std::string_view sig, int64_t now_s) const {
  const std::string want = sign(event, key, exp);
  if (sig.size() != want.size() || CRYPTO_memcmp(sig.data(), want.data(), want.size()) != 0) return Check::BadSignature;
  return now_s > exp ? Check::Expired : Check::Ok;
}

}  // namespace oddsrelay::rest
