// One server WebSocket frame, header included, encoded once and shared by
// every connection that sends it (docs/architecture.md, step 3). A
// connection's send queue holds references; the bytes are freed when the
// last write that carries them completes.
//
// Two kinds of reference, so that no subscriber ever touches an atomic:
// - FrameRef: a relay loop's own reference, a plain counter (loop thread
//   only).
// - SharedFrame: the hub's immutable bytes, shared across loops by an
//   atomic count. Each loop wraps a SharedFrame once per frame in a local
//   Frame (FrameRef::local) and hands that to its subscribers, so a frame
//   costs one atomic reference per loop, never one per subscriber.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "protocol/ws_frame.h"
#include "relay/heap_bytes.h"

namespace oddsrelay::relay {

// Where each entry "<key>":<value> of a frame's JSON object lies, so a
// stream filter can cut a frame down to the entries it admits without
// encoding them again (stream_filter.h). `id`: the event number (evt:) or
// the market id (odds:); `off`: from the object's opening brace.
struct Part {
  uint64_t id;
  uint32_t off, len;
};

// The other forms a loop may send a frame in: as a Server-Sent Event
// (relay/sse.h), or compressed with permessage-deflate (relay/outbox.h).
enum class Framing : uint8_t { Sse = 0, Deflated = 1 };

class Frame;
using SharedFrame = std::shared_ptr<const Frame>;

// The heap a frame keeps alive (heap_bytes.h), for the resume window's
// bound: `own`, what only this loop holds (its frame, its bytes, its other
// framings); `shared`, the hub's bytes a loop-local frame wraps, which
// every loop's wrapper keeps alive.
struct FrameHeap {
  size_t own = 0, shared = 0;
};

class Frame {
 public:
  Frame() = default;
  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;
  inline ~Frame();
  std::string_view bytes() const { return origin_ ? origin_->bytes() : std::string_view(buf_).substr(off_); }
  size_t size() const { return origin_ ? origin_->size() : buf_.size() - off_; }
  void add_heap(FrameHeap& h) const {
    // SharedFrame(Frame*) allocates its control block apart: a vtable
    // pointer, two counts and the pointer (libstdc++'s _Sp_counted_ptr).
    constexpr size_t kControlBlock = 24;
    h.own += heap_block(sizeof(Frame)) + heap_string(buf_);
    if (origin_) h.shared += heap_block(sizeof(Frame)) + heap_block(kControlBlock) + heap_string(origin_->buf_);
    for (const Frame* o : other_)
      if (o) o->add_heap(h);
  }

 private:
  friend class FrameRef;
  friend class FrameBuilder;
  std::string buf_;
  uint32_t off_ = 0;
  uint32_t refs_ = 0;
  SharedFrame origin_;  // set: a loop's wrapper around the hub's bytes (buf_ unused)
  // The same frame in other framings (Framing), each made once by the
  // loop that first needs it. Loop-local frames only.
  mutable Frame* other_[2] = {nullptr, nullptr};
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
  // The frame in another framing, cached on this loop-local frame: made
  // by `make` the first time it is asked for, shared by every stream of
  // the loop that sends it in that framing.
  template <class Make>
  FrameRef other(Framing kind, Make&& make) const {
    Frame*& slot = f_->other_[static_cast<size_t>(kind)];
    if (!slot) {
      FrameRef o = make(*this);
      slot = std::exchange(o.f_, nullptr);  // the cache holds that reference
    }
    return FrameRef(slot);
  }
  const Frame* get() const { return f_; }
  const Frame* operator->() const { return f_; }

  // A loop-local reference to the hub's bytes: one atomic reference held
  // for as long as any subscriber of this loop holds the frame.
  static FrameRef local(SharedFrame s) {
    if (!s) return FrameRef();
    auto* f = new Frame;
    f->origin_ = std::move(s);
    return FrameRef(f);
  }
  // Turns a freshly encoded frame (this the only reference) into shared
  // bytes for other threads; the FrameRef is empty afterwards.
  SharedFrame share() && {
    if (!f_) return nullptr;
    if (f_->origin_ && f_->refs_ == 1) {  // already a wrapper: hand on what it wraps
      SharedFrame s = f_->origin_;
      reset();
      return s;
    }
    if (f_->refs_ != 1) {  // others hold it on this thread: share a copy
      auto* copy = new Frame;
      copy->buf_ = std::string(f_->bytes());
      reset();
      return SharedFrame(copy);
    }
    f_->refs_ = 0;  // the shared_ptr owns it now; no FrameRef counts it
    return SharedFrame(std::exchange(f_, nullptr));
  }

 private:
  Frame* f_ = nullptr;
};

inline Frame::~Frame() {
  for (Frame* o : other_)
    if (o && --o->refs_ == 0) delete o;  // the cache's references
}

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
  // `rsv`: reserved bits of the header (ws::kRsv1: a compressed message).
  FrameRef finish(ws::Opcode op = ws::kText, uint8_t rsv = 0) {
    const size_t len = f_->buf_.size() - kRoom;
    const size_t head = ws::frame_header_size(len);
    ws::write_frame_header(f_->buf_.data() + kRoom - head, op, len);
    f_->buf_[kRoom - head] = static_cast<char>(f_->buf_[kRoom - head] | rsv);
    f_->off_ = static_cast<uint32_t>(kRoom - head);
    Frame* f = std::exchange(f_, nullptr);
    return FrameRef(f);
  }

 private:
  Frame* f_;
};

}  // namespace oddsrelay::relay
