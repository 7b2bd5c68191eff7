// HMAC-SHA256 as lowercase hex (OpenSSL's libcrypto): signs stream URLs
// and webhook bodies.
#pragma once

#include <string>
#include <string_view>

namespace oddsrelay {

std::string hmac_sha256_hex(std::string_view key, std::string_view data);

}  // namespace oddsrelay
