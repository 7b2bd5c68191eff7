#include "engine/sources/read_ahead.h"

#include <utility>

#include "protocol/named_thread.h"

namespace oddsrelay {

ReadAhead::ReadAhead(FeedFileReader& reader) : reader_(reader) {
  thread_ = named_thread("read-ahead", [this] { run(); });
}

void ReadAhead::finish() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
    ready_.clear();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool ReadAhead::next(std::vector<feed::Record>& chunk) {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return !ready_.empty() || end_ || stop_; });
  if (ready_.empty()) return false;
  chunk = std::move(ready_.front());
  ready_.pop_front();
  lock.unlock();
  cv_.notify_all();
  return true;
}

void ReadAhead::run() {
  for (;;) {
    std::vector<feed::Record> chunk;
    chunk.reserve(kChunk);
    feed::Record r;
    while (chunk.size() < kChunk && reader_.next(r)) {
      chunk.push_back(std::move(r));
      r = feed::Record{};
    }
    const bool end = chunk.size() < kChunk;
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return ready_.size() < kMaxChunks || stop_; });
    if (stop_) return;
    if (!chunk.empty()) ready_.push_back(std::move(chunk));
    end_ = end;
    lock.unlock();
    cv_.notify_all();
    if (end) return;
  }
}

}  // namespace oddsrelay
