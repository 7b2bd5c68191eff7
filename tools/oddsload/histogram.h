// Delivery-latency histogram for the load client: log-linear buckets (16
// per power of two, so any value is within about 4% of its bucket's lower
// edge) from 1 us to about 70 s, with exact count, max and percentiles.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>

namespace oddsrelay::load {

class Histogram {
 public:
  static constexpr int kSub = 16;
  void add(int64_t us) {
    if (us < 0) us = 0;
    ++buckets_[index(static_cast<uint64_t>(us))];
    ++count_;
    max_ = std::max<uint64_t>(max_, static_cast<uint64_t>(us));
  }
  void merge(const Histogram& o) {
    for (size_t i = 0; i < buckets_.size(); ++i) buckets_[i] += o.buckets_[i];
    count_ += o.count_;
    max_ = std::max(max_, o.max_);
  }
  uint64_t count() const { return count_; }
  uint64_t max() const { return max_; }
  // The value (us) at quantile q in [0, 1]: the lower edge of its bucket.
  uint64_t quantile(double q) const {
    if (count_ == 0) return 0;
    uint64_t rank = static_cast<uint64_t>(q * static_cast<double>(count_ - 1)) + 1, seen = 0;
    for (size_t i = 0; i < buckets_.size(); ++i) {
      seen += buckets_[i];
      if (seen >= rank) return std::min(lower(i), max_);
    }
    return max_;
  }

 private:
  static size_t index(uint64_t v) {
    if (v < kSub) return static_cast<size_t>(v);
    int e = std::bit_width(v) - 5;  // v >> e lies in [16, 32)
    size_t i = static_cast<size_t>(e + 1) * kSub + static_cast<size_t>((v >> e) - kSub);
    return std::min(i, kBuckets - 1);
  }
  static uint64_t lower(size_t i) {
    if (i < kSub) return i;
    uint64_t e = i / kSub - 1;
    return (kSub + i % kSub) << e;
  }
  static constexpr size_t kBuckets = 27 * kSub;
  std::array<uint64_t, kBuckets> buckets_{};
  uint64_t count_ = 0, max_ = 0;
};

}  // namespace oddsrelay::load
