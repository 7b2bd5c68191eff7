// The bytes of a market's log (engine/history/market_log.h): a growable
// array like std::vector<uint8_t>, but whose append of a point's few bytes
// is written in place, in room the writer made first (the vector's insert was
// a third of the history thread's cost of writing a point), and whose size
// and capacity are 4 bytes each (a market's log is far under 4 GB).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

namespace oddsrelay::history {

class ByteLog {
 public:
  ByteLog() = default;
  ByteLog(const uint8_t* b, const uint8_t* e) {
    reserve(static_cast<size_t>(e - b));
    append(b, static_cast<size_t>(e - b));
  }
  ByteLog(ByteLog&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)), cap_(std::exchange(o.cap_, 0)) {}
  ByteLog& operator=(ByteLog&& o) noexcept {
    swap(o);
    return *this;
  }
  ByteLog(const ByteLog&) = delete;
  ByteLog& operator=(const ByteLog&) = delete;
  ~ByteLog() { std::free(data_); }

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  size_t capacity() const { return cap_; }
  bool empty() const { return size_ == 0; }
  size_t room() const { return cap_ - size_; }
  uint8_t& operator[](size_t i) { return data_[i]; }
  // Capacity exactly `n` (at least the size): the memory bound counts it.
  void reserve(size_t n) {
    if (n <= cap_) return;
    // malloc, copy, free rather than realloc: a log's growth always moves
    // it (a quarter more is past the allocator's size class), and the two
    // calls take the allocator's thread cache where realloc does not
    // (realloc was 6% of the history thread's instructions).
    void* p = std::malloc(n);
    if (!p) throw std::bad_alloc();
    if (size_) std::memcpy(p, data_, size_);
    std::free(data_);
    data_ = static_cast<uint8_t*>(p);
    cap_ = static_cast<uint32_t>(n);
  }
  // Within the room reserved.
  void append(const uint8_t* b, size_t n) {
    if (n) std::memcpy(data_ + size_, b, n);
    size_ += static_cast<uint32_t>(n);
  }
  // A writer with room for kSmall bytes writes them in place: tail(), then
  // grew_to() the end of what it wrote. (Written into a buffer and copied
  // as one 32-byte move, the copy's loads waited on the byte stores they
  // read back: half of the time of a point's compare and write.)
  static constexpr size_t kSmall = 32;
  uint8_t* tail() { return data_ + size_; }
  void grew_to(const uint8_t* end) { size_ = static_cast<uint32_t>(end - data_); }
  void push_back(uint8_t c) { data_[size_++] = c; }
  void swap(ByteLog& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(cap_, o.cap_);
  }

 private:
  uint8_t* data_ = nullptr;
  uint32_t size_ = 0, cap_ = 0;
};

}  // namespace oddsrelay::history
