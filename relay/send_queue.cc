#include "relay/send_queue.h"

namespace oddsrelay::relay {

bool SendQueue::push(FrameRef f, uint64_t channel) {
  if (channel != 0 && !inflight_.empty()) {
    auto [it, fresh] = index_.try_emplace(channel, static_cast<uint32_t>(queued_.size()));
    if (!fresh) {
      // The older frame of this channel leaves the queue; the newer one is
      // appended so it keeps its place after the frames that preceded it.
      Item& old = queued_[it->second];
      queued_bytes_ -= old.frame->size();
      if (old.exempt) queued_exempt_ -= old.frame->size();
      old.frame.reset();
      it->second = static_cast<uint32_t>(queued_.size());
      ++conflated_unreported_;
      ++conflated_total_;
    }
  }
  if (counted() + f->size() > limit_) {
    if (channel != 0) index_.erase(channel);
    return false;
  }
  queued_bytes_ += f->size();
  queued_.push_back(Item{std::move(f), channel});
  return true;
}

void SendQueue::push_final(FrameRef f) {
  queued_bytes_ += f->size();
  queued_.push_back(Item{std::move(f), 0});
}

void SendQueue::push_exempt(FrameRef f, uint64_t channel) {
  queued_bytes_ += f->size();
  queued_exempt_ += f->size();
  queued_.push_back(Item{std::move(f), channel, true});
}

}  // namespace oddsrelay::relay
