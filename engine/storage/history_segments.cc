// The odds history's files (engine/storage/history_segments.h).
#include "engine/storage/history_segments.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "engine/history/varint.h"
#include "engine/storage/data_dir.h"
#include "engine/storage/fs_util.h"

namespace oddsrelay::history {

namespace {

constexpr char kMagic[8] = {'O', 'R', 'H', 'S', 'E', 'G', '1', '\n'};
constexpr size_t kHeaderBytes = 16;
constexpr char kSyncedMagic[8] = {'O', 'R', 'H', 'S', 'Y', 'N', '1', '\n'};
constexpr size_t kSyncedBytes = 24;

std::string synced_path(const std::string& dir) { return dir + "/history-synced"; }

uint64_t get_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

void put_le64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

std::vector<uint8_t> read_all(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  std::vector<uint8_t> out;
  uint8_t buf[1 << 16];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.insert(out.end(), buf, buf + n);
  const bool bad = std::ferror(f);
  std::fclose(f);
  if (bad) throw std::runtime_error("cannot read " + path);
  return out;
}

// The varint frame length at `p`, unless the bytes end within it.
bool frame_length(const uint8_t* p, const uint8_t* end, uint64_t& len, size_t& used) {
  len = 0;
  for (int shift = 0; p + used < end && shift < 64; shift += 7) {
    const uint8_t b = p[used++];
    len |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

}  // namespace

// Returns false when the file ends in a bad frame (cut off here) or a bad
// header: what follows it cannot be decoded.
bool HistorySegments::load_file(const std::string& path, File& f, SegmentLoad& r,
                                const std::function<void(const LoggedBatch&)>& fn,
                                const std::function<bool(uint64_t)>& seeded) {
  const std::vector<uint8_t> data = read_all(path);
  codec_.new_segment();
  size_t good = 0;
  if (data.size() >= kHeaderBytes && std::memcmp(data.data(), kMagic, 8) == 0) {
    good = kHeaderBytes;
    r.base = get_le64(data.data() + 8);
    if (r.base != 0 && !(seeded && seeded(r.base))) {  // a seeded history whose seed is not at hand
      r.from_start = false;
      f.bytes = data.size();
      return true;
    }
  }
  LoggedBatch b;
  while (good >= kHeaderBytes && good < data.size()) {
    uint64_t len = 0;
    size_t used = 0;
    const uint8_t* p = data.data() + good;
    if (!frame_length(p, data.data() + data.size(), len, used) || len > data.size() - good - used ||
        data.size() - good - used - len < 8 || XXH3_64bits(p + used, len) != get_le64(p + used + len))
      break;
    const uint8_t* q = p + used;
    while (q < p + used + len) {
      codec_.get(q, b);
      for (const feed::Record& rec : b.records)
        if (rec.op() != feed::Op::Stats) f.events.insert(rec.number);
      fn(b);
      for (uint64_t n : b.evicted) {
        f.events.erase(n);
        for (File& older : files_) older.events.erase(n);  // deleted by start() once empty
      }
      r.seq = b.seq;
      ++r.batches;
    }
    good += used + len + 8;
  }
  f.bytes = good;
  if (good == data.size()) return true;
  r.torn_tail = true;
  r.cut_bytes += data.size() - good;
  std::fprintf(stderr, "oddsrelay: history segment %s: bad frame at byte %zu, %zu bytes cut\n", path.c_str(), good,
               data.size() - good);
  if (::truncate(path.c_str(), static_cast<off_t>(good)) != 0)
    throw std::runtime_error("cannot cut " + path + ": " + std::strerror(errno));
  return false;
}

SegmentLoad HistorySegments::load(const std::function<void(const LoggedBatch&)>& fn,
                                  const std::function<bool(uint64_t)>& seeded) {
  SegmentLoad r;
  const std::vector<uint64_t> names = list_data_dir(dir_).history;
  for (size_t i = 0; i < names.size() && r.from_start; ++i) {
    File f;
    f.first = names[i];
    const bool whole = load_file(history_segment_path(dir_, f.first), f, r, fn, seeded);
    r.bytes += f.bytes;
    files_.push_back(std::move(f));
    if (whole) continue;
    // Nothing after a bad frame can be decoded (its deltas follow it).
    for (size_t j = i + 1; j < names.size(); ++j)
      if (::unlink(history_segment_path(dir_, names[j]).c_str()) == 0) ++r.files_dropped;
    break;
  }
  // A file is started at the position after the last one written: an empty
  // newest file (the ones before it gone at the horizon) still says so.
  if (r.from_start && !files_.empty() && files_.back().first > 0) r.seq = std::max(r.seq, files_.back().first - 1);
  r.files = files_.size();
  counted();
  return r;
}

std::optional<uint64_t> HistorySegments::synced_through(const std::string& dir) {
  uint8_t b[kSyncedBytes];
  const int fd = ::open(synced_path(dir).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  const ssize_t n = ::pread(fd, b, sizeof b, 0);
  ::close(fd);
  if (n != static_cast<ssize_t>(sizeof b) || std::memcmp(b, kSyncedMagic, 8) != 0 ||
      XXH3_64bits(b, 16) != get_le64(b + 16))
    return std::nullopt;
  return get_le64(b + 8);
}

// After an fdatasync of the files: what it made durable. Not synced itself:
// a power loss leaves an older position, or a bad file, and either only
// makes the next restart read the files before serving.
void HistorySegments::write_synced() {
  if (synced_fd_ < 0) synced_fd_ = ::open(synced_path(dir_).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (synced_fd_ < 0) return;
  std::vector<uint8_t> b(kSyncedMagic, kSyncedMagic + 8);
  put_le64(b, written_seq_);
  put_le64(b, XXH3_64bits(b.data(), 16));
  if (::pwrite(synced_fd_, b.data(), b.size(), 0) != static_cast<ssize_t>(b.size()))
    std::fprintf(stderr, "oddsrelay: history-synced: %s\n", std::strerror(errno));
}

void HistorySegments::clear() {
  if (synced_fd_ >= 0) ::close(synced_fd_);
  synced_fd_ = -1;
  ::unlink(synced_path(dir_).c_str());
  const DataDirFiles listed = list_data_dir(dir_);
  for (uint64_t first : listed.history) ::unlink(history_segment_path(dir_, first).c_str());
  for (uint64_t base : listed.history_seeds) ::unlink(history_seed_path(dir_, base).c_str());
  files_.clear();
  counted();
}

bool HistorySegments::start(uint64_t next, uint64_t base, std::string& err) {
  const std::string path = history_segment_path(dir_, next);
  if (!files_.empty() && files_.back().first == next) files_.pop_back();  // it held nothing: started again
  std::vector<uint8_t> header(kMagic, kMagic + 8);
  put_le64(header, base);
  if (!open_appending(path, std::string_view(reinterpret_cast<const char*>(header.data()), header.size()), true, fd_,
                      err))
    return false;
  base_ = base;
  codec_.new_segment();
  files_.push_back(File{next, kHeaderBytes, {}});
  retire({});  // the file before may hold no event still held
  counted();
  last_sync_ = std::chrono::steady_clock::now();
  written_seq_ = next - 1;
  durable_seq_.store(written_seq_, std::memory_order_release);
  return true;
}

void HistorySegments::note_events(std::span<const feed::Record> records) {
  File& f = files_.back();
  for (const feed::Record& r : records) {
    const feed::Op op = r.op();
    if (op == feed::Op::Market || op == feed::Op::Event || op == feed::Op::Remove) f.events.insert(r.number);
  }
}

void HistorySegments::add(uint64_t first_seq, uint64_t seq, std::span<const feed::Record> records,
                          const std::vector<uint64_t>& evicted) {
  if (fd_ < 0) return;
  if (buf_.empty()) buf_.resize(10);  // room for the frame's length, written in front
  codec_.put(first_seq, seq, records, evicted, buf_);
  note_events(records);
  for (uint64_t n : evicted) files_.back().events.erase(n);
  retire(evicted);
  pending_seq_ = seq;
}

void HistorySegments::flush() {
  if (fd_ < 0 || buf_.empty()) return;
  const size_t len = buf_.size() - 10;
  const uint64_t h = XXH3_64bits(buf_.data() + 10, len);
  put_le64(buf_, h);
  std::vector<uint8_t> prefix;
  put_varint(prefix, len);
  const size_t at = 10 - prefix.size();
  std::copy(prefix.begin(), prefix.end(), buf_.begin() + static_cast<ptrdiff_t>(at));
  std::string err;
  if (!write_fully(fd_, std::string_view(reinterpret_cast<const char*>(buf_.data() + at), buf_.size() - at), err))
    std::fprintf(stderr, "oddsrelay: history segment: %s\n", err.c_str());
  files_.back().bytes += buf_.size() - at;
  buf_.clear();
  written_seq_ = pending_seq_;
  durable_seq_.store(written_seq_, std::memory_order_release);
  const auto now = std::chrono::steady_clock::now();
  if (now - last_sync_ >= std::chrono::milliseconds(sync_ms_)) {
    ::fdatasync(fd_);
    last_sync_ = now;
    write_synced();
  }
  if ((files_.back().bytes >= segment_bytes_ || codec_.held() >= state_bytes_) && start(written_seq_ + 1, base_, err))
    return;
  counted();
}

void HistorySegments::retire(const std::vector<uint64_t>& evicted) {
  for (size_t i = 0; i + 1 < files_.size();) {
    for (uint64_t n : evicted) files_[i].events.erase(n);
    if (!files_[i].events.empty()) {
      ++i;
      continue;
    }
    ::unlink(history_segment_path(dir_, files_[i].first).c_str());
    files_.erase(files_.begin() + static_cast<ptrdiff_t>(i));
  }
}

std::vector<uint64_t> HistorySegments::held_events() const {
  std::unordered_set<uint64_t> all;
  for (const File& f : files_) all.insert(f.events.begin(), f.events.end());
  return {all.begin(), all.end()};
}

void HistorySegments::counted() {
  uint64_t bytes = 0;
  for (const File& f : files_) bytes += f.bytes;
  nfiles_.store(files_.size(), std::memory_order_relaxed);
  bytes_.store(bytes, std::memory_order_relaxed);
}

void HistorySegments::close() {
  if (fd_ < 0) return;
  flush();
  ::fdatasync(fd_);
  write_synced();
  ::close(fd_);
  fd_ = -1;
  if (synced_fd_ >= 0) ::close(synced_fd_);
  synced_fd_ = -1;
}

}  // namespace oddsrelay::history
