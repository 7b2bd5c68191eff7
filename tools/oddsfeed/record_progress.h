// The progress line of the oddsfeed commands that read a whole capture
// (inspect, digest, history): a 10M-record file takes from seconds to a
// minute, and a tool that says nothing meanwhile looks hung. One line on
// stderr every million records, or every ODDSFEED_PROGRESS_EVERY (the e2e
// suite's small files); stdout, which scripts read, is left alone.
#pragma once

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace oddsrelay {

class RecordProgress {
 public:
  RecordProgress() {
    const char* v = std::getenv("ODDSFEED_PROGRESS_EVERY");
    if (const uint64_t n = v ? std::strtoull(v, nullptr, 10) : 0; n > 0) every_ = next_ = n;
  }
  // After the n-th record read (n from 1).
  void at(uint64_t n) {
    if (n < next_) return;
    std::fprintf(stderr, "oddsfeed: %" PRIu64 " records\n", n);
    next_ += every_;
  }

 private:
  uint64_t every_ = 1'000'000, next_ = 1'000'000;
};

}  // namespace oddsrelay
