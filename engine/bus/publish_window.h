// How many of the ingest's log messages may be in flight to the bus at
// once, and what their acks say about the stream (BusPublisher's flow
// control, kept apart so its rules can be tested without a server).
//
// Each message carries Nats-Expected-Last-Sequence: the stream stores it
// only in the slot after the one its predecessor was meant to take. That
// chains a pipelined window safely while nothing else writes the stream.
// After a failover something else can: a message sent before the sync,
// whose ack never came, may still be committed by the new stream leader
// (it was in the raft log the leader inherited) after the sync read where
// the stream stood. If that message takes the slot the first new one
// expected, the first one is refused, and the second, expecting the slot
// the first would have taken, is stored after the stale one: a hole in the
// log, and every edge rejoins from a snapshot. So after a sync the first
// message goes alone; once it is stored, what the new leader inherited has
// been applied before it, and the window opens.
#pragma once

#include <cstddef>

namespace oddsrelay::bus {

class PublishWindow {
 public:
  explicit PublishWindow(size_t limit) : limit_(limit) {}

  // Where the stream stands was just read: the next message is the probe.
  void after_sync() {
    probing_ = true;
    refused_ = false;
  }
  bool may_send() const { return inflight_ < (probing_ ? 1 : limit_); }
  void sent() { ++inflight_; }
  // An ack (or its timeout). `refused` is the stream's "wrong last
  // sequence": the message was not stored because another took its slot.
  // Returns true when a message is stored after one of this round was
  // refused: the stream skipped what the refused one held.
  bool acked(bool ok, bool refused) {
    if (inflight_ > 0) --inflight_;
    if (!ok) {
      refused_ = refused_ || refused;
      return false;
    }
    probing_ = false;
    return refused_;
  }
  // Acks still to come: a sync waits for none.
  size_t inflight() const { return inflight_; }
  bool probing() const { return probing_; }

 private:
  size_t limit_;
  size_t inflight_ = 0;
  bool probing_ = true;
  bool refused_ = false;
};

}  // namespace oddsrelay::bus
