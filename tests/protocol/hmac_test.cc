// HMAC-SHA256 against RFC 4231's test vectors.
#include "protocol/hmac.h"

#include <gtest/gtest.h>

namespace oddsrelay {
namespace {

TEST(Hmac, Rfc4231Vectors) {
  EXPECT_EQ(hmac_sha256_hex(std::string(20, '\x0b'), "Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(hmac_sha256_hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

}  // namespace
}  // namespace oddsrelay
