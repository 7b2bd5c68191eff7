#include "engine/storage/feed_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "protocol/feed_writer.h"
#include "protocol/named_thread.h"

namespace oddsrelay {

FeedFileReader::FeedFileReader() = default;

FeedFileReader::~FeedFileReader() {
  if (gz_) gzclose(static_cast<gzFile>(gz_));
  if (pipe_fd_ >= 0) ::close(pipe_fd_);
}

bool FeedFileReader::open(const std::string& path, std::string& err) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    err = "cannot open " + path + ": " + std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return false;
  }
  // zlib fills its whole buffer before a read returns: on a FIFO or a
  // pipe that holds each line back until a megabyte follows it, so those
  // are read as plain lines, each as soon as it is written.
  if (!S_ISREG(st.st_mode)) {
    pipe_fd_ = fd;
    return true;
  }
  gzFile f = gzdopen(fd, "rb");
  if (!f) {
    err = "cannot open " + path + ": " + std::strerror(errno ? errno : ENOMEM);
    ::close(fd);
    return false;
  }
  gzbuffer(f, 1 << 20);
  gz_ = f;
  return true;
}

int FeedFileReader::read_some(char* to, unsigned len) {
  if (gz_) return gzread(static_cast<gzFile>(gz_), to, len);
  ssize_t n;
  do n = ::read(pipe_fd_, to, len);
  while (n < 0 && errno == EINTR);
  return static_cast<int>(n);
}

bool FeedFileReader::next_line(std::string_view& line, bool& complete) {
  for (;;) {
    size_t nl = buf_.find('\n', pos_);
    if (nl != std::string::npos) {
      line = std::string_view(buf_).substr(pos_, nl - pos_);
      consumed_ += nl + 1 - pos_;
      pos_ = nl + 1;
      complete = true;
      return true;
    }
    if (eof_) {
      if (pos_ >= buf_.size()) return false;
      line = std::string_view(buf_).substr(pos_);
      consumed_ += buf_.size() - pos_;
      pos_ = buf_.size();
      complete = false;
      return true;
    }
    buf_.erase(0, pos_);
    pos_ = 0;
    // A pipe holds 64 KiB: a larger read would only zero more of buf_.
    const unsigned chunk = gz_ ? 1u << 20 : 1u << 16;
    size_t old = buf_.size();
    buf_.resize(old + chunk);
    int n = read_some(buf_.data() + old, chunk);
    if (n <= 0) {
      eof_ = true;
      n = 0;
    }
    buf_.resize(old + static_cast<size_t>(n));
    if (pipe_fd_ >= 0 && !sniffed_ && (buf_.size() >= 2 || eof_)) {
      // Until a line is taken, buf_ starts at the stream's first byte.
      sniffed_ = true;
      if (consumed_ == 0 && buf_.size() >= 2 && static_cast<unsigned char>(buf_[0]) == 0x1f &&
          static_cast<unsigned char>(buf_[1]) == 0x8b) {
        fatal_ = "a gzip feed is read from a file, not a pipe: decompress into the pipe (zcat)";
        return false;
      }
    }
  }
}

bool FeedFileReader::next(feed::Record& out) {
  if ((!gz_ && pipe_fd_ < 0) || !fatal_.empty()) return false;
  std::string_view line;
  bool complete;
  while (next_line(line, complete)) {
    ++stats_.lines;
    if (!complete) {
      // A writer appends whole lines: one without its newline was cut short.
      stats_.torn_tail = true;
      if (problem_) problem_(stats_.lines, feed::LineStatus::Malformed, "torn last line (no newline)");
      ++stats_.malformed;
      break;
    }
    feed::LineStatus st = parser_.parse(line, out);
    stats_.unknown_fields = parser_.unknown_fields();
    switch (st) {
      case feed::LineStatus::Record:
        ++stats_.records;
        good_end_ = consumed_;
        return true;
      case feed::LineStatus::Header:
      case feed::LineStatus::Blank:
        good_end_ = consumed_;
        continue;
      case feed::LineStatus::UnknownOp:
        ++stats_.unknown_ops;
        good_end_ = consumed_;
        continue;
      case feed::LineStatus::Malformed:
      case feed::LineStatus::BadChecksum:
        ++stats_.malformed;
        if (problem_) problem_(stats_.lines, st, parser_.error());
        continue;
      case feed::LineStatus::UnsupportedVersion:
        fatal_ = "line " + std::to_string(stats_.lines) + ": " + parser_.error();
        return false;
    }
  }
  return false;
}

bool FeedFileWriter::open(const std::string& path, std::string& err) {
  bool gz = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0 && !opts_.checksums;
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    err = "cannot open " + path + " for writing: " + std::strerror(errno);
    return false;
  }
  struct stat st {};
  bool empty = fstat(fd_, &st) == 0 && st.st_size == 0;
  if (gz) {
    gz_ = gzdopen(fd_, "ab");
    if (!gz_) {
      err = "cannot start gzip stream on " + path;
      return false;
    }
  }
  if (empty) {
    std::string header;
    feed::write_header("s7", header);
    if (opts_.checksums) feed::append_checksum(header, 0);
    header += '\n';
    write_all(header);
  }
  running_ = true;
  thread_ = named_thread("capture", [this] { run(); });
  return true;
}

void FeedFileWriter::on_batch(const BatchPtr& batch) {
  // Bounded backlog (pipeline.h): a capture on a slow disk slows the feed.
  while (backlog_.full() && running_.load(std::memory_order_relaxed) && !stopping_.load(std::memory_order_relaxed))
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  backlog_.added(*batch);
  queue_.enqueue(batch);
}

void FeedFileWriter::write_all(const std::string& data) {
  if (gz_) {
    gzwrite(static_cast<gzFile>(gz_), data.data(), static_cast<unsigned>(data.size()));
    return;
  }
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd_, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::fprintf(stderr, "oddsrelay: write failed: %s (records are being lost)\n", std::strerror(errno));
      return;
    }
    off += static_cast<size_t>(n);
  }
}

void FeedFileWriter::run() {
  std::string out;
  BatchPtr batches[64];
  auto last_sync = std::chrono::steady_clock::now();
  bool dirty = false;
  for (;;) {
    size_t n = queue_.wait_dequeue_bulk_timed(batches, 64, 50'000);
    if (n == 0 && stopping_.load(std::memory_order_acquire) && queue_.size_approx() == 0) break;
    out.clear();
    uint64_t count = 0;
    // Counted out when taken: the batches are held until written below.
    for (size_t i = 0; i < n; ++i) backlog_.taken(*batches[i]);
    for (size_t i = 0; i < n; ++i) {
      for (const feed::Record& r : batches[i]->records) {
        size_t start = out.size();
        feed::write_record(r, out);
        if (opts_.checksums) feed::append_checksum(out, start);
        out += '\n';
        ++count;
      }
      batches[i].reset();
    }
    if (!out.empty()) {
      write_all(out);
      written_.fetch_add(count, std::memory_order_relaxed);
      dirty = true;
    }
    auto now = std::chrono::steady_clock::now();
    if (dirty && opts_.sync_ms > 0 && now - last_sync >= std::chrono::milliseconds(opts_.sync_ms)) {
      if (!gz_) fdatasync(fd_);
      last_sync = now;
      dirty = false;
    }
  }
}

void FeedFileWriter::close() {
  if (thread_.joinable()) {
    stopping_.store(true, std::memory_order_release);
    thread_.join();
  }
  if (gz_) {
    gzclose(static_cast<gzFile>(gz_));  // closes fd_ too
    gz_ = nullptr;
    fd_ = -1;
  }
  if (fd_ >= 0) {
    if (opts_.sync_ms > 0) fdatasync(fd_);
    ::close(fd_);
    fd_ = -1;
  }
}

}  // namespace oddsrelay
