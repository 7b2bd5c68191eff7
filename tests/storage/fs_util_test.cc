// writev_fully (engine/storage/fs_util.h), which the journal writes every
// batch with: every byte of every iovec, in order, across IOV_MAX chunks
// and short writes; a failure is reported, not retried forever.
#include "engine/storage/fs_util.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <climits>
#include <string>
#include <vector>

namespace oddsrelay {
namespace {

// A writev that takes at most `budget` bytes a call (a short write, as a
// signal or a full disk gives), and fails once `fail_after` bytes are in.
std::string sink;
size_t budget = 0, fail_after = SIZE_MAX, calls = 0, widest = 0;
ssize_t short_writev(int, const iovec* iov, int n) {
  ++calls;
  widest = std::max(widest, static_cast<size_t>(n));
  if (sink.size() >= fail_after) return errno = ENOSPC, -1;
  size_t took = 0;
  for (int i = 0; i < n && took < budget; ++i) {
    const size_t k = std::min(iov[i].iov_len, budget - took);
    sink.append(static_cast<const char*>(iov[i].iov_base), k);
    took += k;
  }
  return static_cast<ssize_t>(took);
}

// 3,000 pieces of 1 to 13 bytes (more than IOV_MAX), and what they say.
std::vector<std::string> pieces(std::string& whole) {
  std::vector<std::string> v;
  for (int i = 0; i < 3000; ++i) {
    v.push_back(std::string(static_cast<size_t>(1 + i % 13), static_cast<char>('a' + i % 26)) + std::to_string(i));
    whole += v.back();
  }
  return v;
}

std::vector<iovec> iovecs(std::vector<std::string>& v) {
  std::vector<iovec> iov;
  for (auto& s : v) iov.push_back({s.data(), s.size()});
  return iov;
}

TEST(WritevFully, EveryByteInOrderThroughShortWritesAndIovMaxChunks) {
  for (size_t b : {size_t{1}, size_t{7}, size_t{4096}, size_t{1} << 30}) {
    std::string want;
    auto v = pieces(want);
    auto iov = iovecs(v);
    sink.clear();
    budget = b;
    fail_after = SIZE_MAX;
    calls = widest = 0;
    std::string err;
    ASSERT_TRUE(writev_fully(-1, iov, err, short_writev)) << err;
    EXPECT_EQ(sink, want) << "budget " << b;
    EXPECT_LE(widest, static_cast<size_t>(IOV_MAX));
    if (b == size_t{1} << 30) {
      EXPECT_EQ(calls, (3000 + IOV_MAX - 1) / IOV_MAX);
    }
  }
}

TEST(WritevFully, AFailureIsReportedAfterWhatWentOut) {
  std::string want;
  auto v = pieces(want);
  auto iov = iovecs(v);
  sink.clear();
  budget = 100;
  fail_after = 1000;
  std::string err;
  EXPECT_FALSE(writev_fully(-1, iov, err, short_writev));
  EXPECT_NE(err.find("write failed"), std::string::npos) << err;
  EXPECT_EQ(sink, want.substr(0, 1000));
}

}  // namespace
}  // namespace oddsrelay
