// Reads and parses a feed file on a thread of its own, a few chunks of
// records ahead of whoever applies them (docs/architecture.md, step 1), so
// that a single-threaded replay into an engine (`oddsfeed digest`) parses
// chunk N+1 on one core while the engine applies chunk N on the other.
// Records come out in file order; the reader is only touched by the
// read-ahead thread until finish() (or the end of the records) is reached.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/storage/feed_file.h"

namespace oddsrelay {

class ReadAhead {
 public:
  static constexpr size_t kChunk = 256;     // records per chunk
  static constexpr size_t kMaxChunks = 16;  // read ahead at most this many chunks

  explicit ReadAhead(FeedFileReader& reader);
  ~ReadAhead() { finish(); }
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  // The next chunk of records (replacing `chunk`'s contents); false once
  // every record was handed out.
  bool next(std::vector<feed::Record>& chunk);
  // Stops reading (what was read ahead is dropped) and joins: from here on
  // the reader's stats() and fatal() are final and safe to read.
  void finish();

 private:
  void run();

  FeedFileReader& reader_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::vector<feed::Record>> ready_;
  bool end_ = false, stop_ = false;
  std::thread thread_;
};

}  // namespace oddsrelay
