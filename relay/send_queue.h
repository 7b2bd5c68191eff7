// A subscriber's bounded send queue (docs/architecture.md, step 4). Frames wait here
// between fan-out and the connection's next write; everything queued in a
// loop turn goes out in one write. While a write is in flight the client is
// behind: an `odds:` frame then replaces the pending one of its channel
// (pt_stream.cc makes the newer one name the markets of both, so no state is
// lost) and the replacement is counted so the connection's next INFO can
// report it. Past `limit` bytes (queued plus in flight) push() refuses and
// the caller closes the connection: a client that never reads holds at most
// that many bytes of references.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "relay/shared_frame.h"

namespace oddsrelay::relay {

class SendQueue {
 public:
  explicit SendQueue(size_t limit) : limit_(limit) {}

  // channel 0: never conflated (event deltas, control frames; INFOs have a
  // channel of their own).
  // False once the bytes held pass the limit (the frame is not queued).
  bool push(FrameRef f, uint64_t channel = 0);
  // Queues regardless of the limit: the close frame that ends a connection.
  void push_final(FrameRef f);
  // Queues outside the limit until written: the 101 and the connect
  // snapshot, whose size grows with the state, not with the client's lag.
  void push_exempt(FrameRef f, uint64_t channel = 0);

  bool has_queued() const { return queued_bytes_ > 0; }
  bool in_flight() const { return !inflight_.empty(); }
  size_t bytes() const { return queued_bytes_ + inflight_bytes_; }

  // Moves every queued frame into flight and calls out(bytes) for each, in
  // order. Only when nothing is in flight.
  template <class F>
  void take(F&& out) {
    for (Item& it : queued_) {
      if (!it.frame) continue;  // replaced by a newer frame of its channel
      out(it.frame->bytes());
      inflight_bytes_ += it.frame->size();
      if (it.exempt) inflight_exempt_ += it.frame->size();
      inflight_.push_back(std::move(it));
    }
    queued_.clear();
    queued_bytes_ = 0;
    queued_exempt_ = 0;
    index_.clear();
  }
  // The write in flight completed: its references are dropped.
  void written() {
    inflight_.clear();
    inflight_bytes_ = 0;
    inflight_exempt_ = 0;
  }
  void clear() {
    queued_.clear();
    index_.clear();
    queued_bytes_ = 0;
    queued_exempt_ = 0;
  }

  // Would push(_, channel) now replace a queued frame of that channel?
  bool will_replace(uint64_t channel) const { return channel != 0 && !inflight_.empty() && index_.count(channel); }

  // Frames replaced since the last call; resets the count.
  uint64_t take_conflated() { return std::exchange(conflated_unreported_, 0); }
  uint64_t conflated_total() const { return conflated_total_; }

 private:
  struct Item {
    FrameRef frame;
    uint64_t channel;
    bool exempt = false;
  };
  size_t counted() const { return bytes() - queued_exempt_ - inflight_exempt_; }
  size_t limit_;
  std::vector<Item> queued_, inflight_;
  size_t queued_bytes_ = 0, inflight_bytes_ = 0;
  size_t queued_exempt_ = 0, inflight_exempt_ = 0;  // of those, bytes outside the limit
  // Channel -> position in queued_, kept only while a write is in flight
  // (the slow path), so fast clients never touch the map.
  std::unordered_map<uint64_t, uint32_t> index_;
  uint64_t conflated_unreported_ = 0, conflated_total_ = 0;
};

}  // namespace oddsrelay::relay
