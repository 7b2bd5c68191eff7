// HTTP connections per key and per address (rest/conn_limits.h): a slot
// is held for the connection's life and given back when it goes.
#include "rest/conn_limits.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace oddsrelay::rest {
namespace {

TEST(ConnLimits, AKeyHoldsAtMostItsHttpConnections) {
  ConnLimits limits(0);
  ApiKey key;
  key.digest = sha256("k");
  key.http_connections = 2;
  std::vector<std::unique_ptr<Peer>> conns;
  for (int i = 0; i < 3; ++i) conns.push_back(std::make_unique<Peer>());
  EXPECT_TRUE(limits.admit_key(*conns[0], key));
  EXPECT_TRUE(limits.admit_key(*conns[0], key));  // its next request: the same slot
  EXPECT_TRUE(limits.admit_key(*conns[1], key));
  EXPECT_FALSE(limits.admit_key(*conns[2], key));
  EXPECT_EQ(limits.held_by_key(key), 2u);
  conns[0].reset();  // a connection closes: its slot is free
  EXPECT_EQ(limits.held_by_key(key), 1u);
  EXPECT_TRUE(limits.admit_key(*conns[2], key));
  ApiKey other;
  other.digest = sha256("other");
  other.http_connections = 1;
  EXPECT_TRUE(limits.admit_key(*conns[2], other));  // another key on the same connection: moves its slot
  EXPECT_EQ(limits.held_by_key(key), 1u);
}

TEST(ConnLimits, KeylessConnectionsPerAddress) {
  ConnLimits limits(1);
  std::array<uint8_t, 16> a{}, b{};
  a[15] = 1;
  b[15] = 2;
  Peer p1, p2, p3;
  EXPECT_TRUE(limits.admit_address(p1, a));
  EXPECT_FALSE(limits.admit_address(p2, a));
  EXPECT_TRUE(limits.admit_address(p3, b));
  ApiKey key;
  key.digest = sha256("k");
  EXPECT_TRUE(limits.admit_key(p2, key));
  EXPECT_TRUE(limits.admit_address(p2, a));  // a keyed connection is not counted again
}

}  // namespace
}  // namespace oddsrelay::rest
