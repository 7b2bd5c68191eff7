// Reading and writing feed-format files (docs/feed-format.md) on disk: the one
// place that does file I/O for the replay source, capture, the journal and
// the oddsfeed tool. Reading accepts plain and gzip files alike; a FIFO or a
// pipe is read as plain lines, each as soon as it is written.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "engine/core/pipeline.h"
#include "protocol/feed_reader.h"
#include "protocol/hand_off_queue.h"

namespace oddsrelay {

struct FeedReadStats {
  uint64_t lines = 0;
  uint64_t records = 0;
  uint64_t malformed = 0;  // includes bad checksums
  uint64_t unknown_ops = 0;
  uint64_t unknown_fields = 0;
  bool torn_tail = false;  // the last line had no newline
};

// Pull reader over a plain or gzip file, one record at a time.
class FeedFileReader {
 public:
  // Called for every line that is not a record or a header: its number,
  // status and a one-line reason.
  using ProblemFn = std::function<void(uint64_t line_no, feed::LineStatus, const std::string&)>;

  FeedFileReader();
  ~FeedFileReader();
  FeedFileReader(const FeedFileReader&) = delete;
  FeedFileReader& operator=(const FeedFileReader&) = delete;

  // False with `err` set when the file cannot be opened.
  bool open(const std::string& path, std::string& err);
  void on_problem(ProblemFn fn) { problem_ = std::move(fn); }
  // Records keep their lines (feed::FeedParser::keep_text).
  void keep_text(bool on) { parser_.keep_text(on); }

  // Next record; false at the end of the file or after a fatal error
  // (fatal() then says why, e.g. an unsupported format version).
  bool next(feed::Record& out);

  const FeedReadStats& stats() const { return stats_; }
  const std::string& fatal() const { return fatal_; }
  // Byte offset (in the uncompressed stream) where the last returned record's
  // line ends, newline included: everything before it is intact.
  uint64_t good_end() const { return good_end_; }
  uint64_t line_no() const { return stats_.lines; }

 private:
  bool next_line(std::string_view& line, bool& complete);
  // Up to `len` bytes into `to`; 0 at the end, -1 on an error.
  int read_some(char* to, unsigned len);

  void* gz_ = nullptr;    // gzFile, for a regular file
  int pipe_fd_ = -1;      // a FIFO, a pipe or a character device, read as it comes
  bool sniffed_ = false;  // its first bytes were checked for gzip's magic
  std::string buf_;
  size_t pos_ = 0;
  bool eof_ = false;
  uint64_t consumed_ = 0;  // bytes of buf_ before pos_ already dropped, plus pos_
  uint64_t good_end_ = 0;
  feed::FeedParser parser_;
  ProblemFn problem_;
  FeedReadStats stats_;
  std::string fatal_;
};

// Appends every applied record to a file in the feed format, on its own
// thread (a BatchSink must not block the engine). Used for --capture (plain
// lines, gzip when the name ends in .gz) and for the journal (checksummed
// lines, fdatasync every `sync_ms`).
class FeedFileWriter : public BatchSink {
 public:
  struct Options {
    bool checksums = false;
    int sync_ms = 0;  // 0: never fsync
  };
  FeedFileWriter(Options opts) : opts_(opts) {}
  ~FeedFileWriter() override { close(); }

  // Opens for append (creates the file, with a header line, if empty).
  bool open(const std::string& path, std::string& err);
  void on_batch(const BatchPtr& batch) override;
  // Writes what is queued, syncs and closes.
  void close();
  uint64_t written() const { return written_.load(std::memory_order_relaxed); }

 private:
  void run();
  void write_all(const std::string& data);

  Options opts_;
  int fd_ = -1;
  void* gz_ = nullptr;
  HandOffQueue<BatchPtr> queue_;
  Backlog backlog_;  // what queue_ holds
  std::atomic<bool> stopping_{false};
  std::atomic<bool> running_{false};  // the writer thread takes batches
  std::atomic<uint64_t> written_{0};
  std::thread thread_;
};

}  // namespace oddsrelay
