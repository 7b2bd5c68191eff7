// Signed stream URLs: a signature verifies until it expires, and any
// change to event, key, expiry or signature is refused.
#include "rest/stream_addon.h"

#include <gtest/gtest.h>

namespace oddsrelay::rest {
namespace {

TEST(StreamSigner, VerifiesUntilExpiryAndRefusesTampering) {
  StreamSigner s("secret");
  const std::string sig = s.sign("s7-1.5", "abcd", 1000);
  EXPECT_EQ(sig.size(), 64u);
  using C = StreamSigner::Check;
  EXPECT_EQ(s.verify("s7-1.5", "abcd", 1000, sig, 999), C::Ok);
  EXPECT_EQ(s.verify("s7-1.5", "abcd", 1000, sig, 1000), C::Ok);
  EXPECT_EQ(s.verify("s7-1.5", "abcd", 1000, sig, 1001), C::Expired);
  EXPECT_EQ(s.verify("s7-1.6", "abcd", 1000, sig, 0), C::BadSignature);
  EXPECT_EQ(s.verify("s7-1.5", "abce", 1000, sig, 0), C::BadSignature);
  EXPECT_EQ(s.verify("s7-1.5", "abcd", 2000, sig, 0), C::BadSignature);  // a stretched expiry
  EXPECT_EQ(s.verify("s7-1.5", "abcd", 1000, sig.substr(1), 0), C::BadSignature);
  EXPECT_EQ(StreamSigner("other").verify("s7-1.5", "abcd", 1000, sig, 0), C::BadSignature);
  EXPECT_NE(StreamSigner().sign("e", "k", 1), StreamSigner().sign("e", "k", 1));  // a fresh secret per server
}

}  // namespace
}  // namespace oddsrelay::rest
