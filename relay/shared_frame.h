// One server WebSocket frame, header included, encoded once and shared by
// every connection that sends it (docs/architecture.md, step 3). A
// connection's send queue holds references; the bytes are freed when the
// last write that carries them completes. Frames live on the relay loop
// thread only, so the count is a plain integer: no atomic per delivery.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "protocol/ws_frame.h"

namespace oddsrelay::relay {

class Frame {
 public:
  std::string_view bytes() const { return std::string_view(buf_).substr(off_); }
  size_t size() const { return buf_.size() - off_; }

 private:
  friend class FrameRef;
  friend class FrameBuilder;
  std::string buf_;
  uint32_t off_ = 0;
  uint32_t refs_ = 0;
};

class FrameRef {
 public:
  FrameRef() = default;
  explicit FrameRef(Frame* f) : f_(f) {
    if (f_) ++f_->refs_;
  }
  FrameRef(const FrameRef& o) : FrameRef(o.f_) {}
  FrameRef(FrameRef&& o) noexcept : f_(std::exchange(o.f_, nullptr)) {}
  FrameRef& operator=(FrameRef o) noexcept {
    std::swap(f_, o.f_);
    return *this;
  }
  ~FrameRef() { reset(); }
  void reset() {
    if (f_ && --f_->refs_ == 0) delete f_;
    f_ = nullptr;
  }
  explicit operator bool() const { return f_ != nullptr; }
  const Frame* get() const { return f_; }
  const Frame* operator->() const { return f_; }

 private:
  Frame* f_ = nullptr;
};

// Builds a frame's payload in place after room for the longest header, then
// writes the header just in front of it: one buffer, no copy of the payload.
class FrameBuilder {
 public:
  static constexpr size_t kRoom = 10;
  FrameBuilder() : f_(new Frame) { f_->buf_.assign(kRoom, '\0'); }
  ~FrameBuilder() { delete f_; }
  FrameBuilder(const FrameBuilder&) = delete;
  FrameBuilder& operator=(const FrameBuilder&) = delete;

  std::string& payload() { return f_->buf_; }  // append only; the first kRoom bytes are reserved
  // The payload as it is, with no frame header (the HTTP 101 response).
  FrameRef finish_raw() {
    f_->off_ = kRoom;
    return FrameRef(std::exchange(f_, nullptr));
  }
  FrameRef finish(ws::Opcode op = ws::kText) {
    const size_t len = f_->buf_.size() - kRoom;
    const size_t head = ws::frame_header_size(len);
    ws::write_frame_header(f_->buf_.data() + kRoom - head, op, len);
    f_->off_ = static_cast<uint32_t>(kRoom - head);
    Frame* f = std::exchange(f_, nullptr);
    return FrameRef(f);
  }

 private:
  Frame* f_;
};

}  // namespace oddsrelay::relay
