#include "engine/storage/data_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string_view>

#include "engine/storage/fs_util.h"
#include "engine/storage/journal.h"
#include "engine/storage/snapshot_file.h"

namespace oddsrelay {
namespace {

std::string padded(uint64_t n) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%020" PRIu64, n);
  return buf;
}

// "<prefix><20 digits><suffix>" -> the number; false for any other name.
bool parse_name(const char* name, const char* prefix, uint64_t& out, const char* suffix = ".jsonl") {
  size_t pl = std::strlen(prefix), n = std::strlen(name);
  if (n != pl + 20 + std::strlen(suffix) || std::strncmp(name, prefix, pl) != 0 ||
      std::strcmp(name + pl + 20, suffix) != 0)
    return false;
  uint64_t v = 0;
  for (size_t i = pl; i < pl + 20; ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
    v = v * 10 + static_cast<uint64_t>(name[i] - '0');
  }
  out = v;
  return true;
}

std::string read_small(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return {};
  char buf[128];
  size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  std::string s(buf, n);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

void write_epoch(const std::string& dir, const std::string& epoch) {
  const std::string path = epoch_path(dir), tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  std::string err;
  if (fd < 0 || !write_fully(fd, epoch + "\n", err) || ::fsync(fd) != 0) {
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("cannot write " + tmp + ": " + (err.empty() ? std::strerror(errno) : err));
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    throw std::runtime_error("cannot rename " + tmp + ": " + std::strerror(errno));
  sync_dir_of(path);
}

// Temporary files of a snapshot write that a crash interrupted.
void remove_leftovers(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> doomed;
  while (dirent* e = ::readdir(d)) {
    std::string_view n(e->d_name);
    if (n.starts_with("snapshot-") && n.ends_with(".tmp")) doomed.emplace_back(n);
  }
  ::closedir(d);
  for (const auto& n : doomed) ::unlink((dir + "/" + n).c_str());
}

// Snapshots that were written and fsynced completely but whose rename did
// not reach the disk: compaction deletes the older snapshot in the same
// directory fsync as the rename (log_writer.cc), so after a power loss the
// newest state can be `snapshot-<seq>.jsonl.tmp`. One that is complete,
// intact and of this log is as good as its final name; recovery renames it
// (read-only: reads it where it is). Returns seq -> path of each.
std::map<uint64_t, std::string> complete_leftovers(const std::string& dir, const std::string& epoch, bool read_only) {
  std::map<uint64_t, std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  std::vector<std::pair<uint64_t, std::string>> found;
  while (dirent* e = ::readdir(d)) {
    std::string_view n(e->d_name);
    uint64_t seq;
    if (n.ends_with(".tmp") && parse_name(std::string(n.substr(0, n.size() - 4)).c_str(), "snapshot-", seq))
      found.emplace_back(seq, dir + "/" + std::string(n));
  }
  ::closedir(d);
  for (auto& [seq, tmp] : found) {
    const std::string path = snapshot_path(dir, seq);
    SnapshotInfo info;
    std::string err;
    if (::access(path.c_str(), F_OK) == 0 || !check_snapshot_file(tmp, info, err) || info.epoch != epoch ||
        info.seq != seq)
      continue;  // a leftover: removed at the end of recovery
    if (read_only) {
      out[seq] = tmp;
    } else if (::rename(tmp.c_str(), path.c_str()) == 0) {
      sync_dir_of(path);
      out[seq] = path;
    }
  }
  return out;
}

}  // namespace

std::string epoch_path(const std::string& dir) { return dir + "/epoch"; }
std::string snapshot_path(const std::string& dir, uint64_t seq) { return dir + "/snapshot-" + padded(seq) + ".jsonl"; }
std::string segment_path(const std::string& dir, uint64_t first) {
  return dir + "/journal-" + padded(first) + ".jsonl";
}

std::string history_segment_path(const std::string& dir, uint64_t first) {
  return dir + "/history-" + padded(first) + ".bin";
}

std::string history_seed_path(const std::string& dir, uint64_t base) {
  return dir + "/history-seed-" + padded(base) + ".jsonl";
}

DataDirFiles list_data_dir(const std::string& dir) {
  DataDirFiles f;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return f;
  while (dirent* e = ::readdir(d)) {
    uint64_t n;
    if (parse_name(e->d_name, "snapshot-", n))
      f.snapshots.push_back(n);
    else if (parse_name(e->d_name, "journal-", n))
      f.segments.push_back(n);
    else if (parse_name(e->d_name, "history-", n, ".bin"))
      f.history.push_back(n);
    else if (parse_name(e->d_name, "history-seed-", n))
      f.history_seeds.push_back(n);
  }
  ::closedir(d);
  std::sort(f.snapshots.begin(), f.snapshots.end());
  std::sort(f.segments.begin(), f.segments.end());
  std::sort(f.history.begin(), f.history.end());
  f.epoch = read_small(epoch_path(dir));
  return f;
}

std::string new_epoch() {
  uint64_t r = static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  if (FILE* f = std::fopen("/dev/urandom", "rb")) {
    uint64_t x = 0;
    if (std::fread(&x, sizeof x, 1, f) == 1) r ^= x;
    std::fclose(f);
  }
  char buf[16];
  std::snprintf(buf, sizeof buf, "%012" PRIx64, static_cast<uint64_t>(r & 0xffffffffffffULL));
  return buf;
}

DataDirRecovery recover_data_dir(const std::string& dir, Engine& engine, bool read_only, const RecoverFrom& from) {
  const auto t0 = std::chrono::steady_clock::now();
  DataDirRecovery r;
  struct stat st {};
  if (read_only && (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)))
    throw std::runtime_error("no data dir at " + dir);
  if (!read_only && ::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    throw std::runtime_error("cannot create data dir " + dir + ": " + std::strerror(errno));
  // The journal of earlier versions (one file, from position 1) becomes the
  // first segment.
  const std::string legacy = dir + "/journal.jsonl";
  if (::access(legacy.c_str(), F_OK) == 0 && list_data_dir(dir).segments.empty()) {
    if (read_only)
      throw std::runtime_error(dir + " has the one-file journal of an earlier version: start oddsrelay on it once");
    if (::rename(legacy.c_str(), segment_path(dir, 1).c_str()) != 0)
      throw std::runtime_error("cannot rename " + legacy + ": " + std::strerror(errno));
  }
  DataDirFiles files = list_data_dir(dir);
  if (files.epoch.empty() && read_only) throw std::runtime_error(dir + " has no epoch file: not a data dir");
  if (files.epoch.empty()) {
    if (!files.snapshots.empty())
      throw std::runtime_error("data dir " + dir +
                               " has snapshots but no epoch file: not starting a new log over them");
    files.epoch = new_epoch();
    write_epoch(dir, files.epoch);
    r.created = true;
  }
  r.epoch = files.epoch;

  // The newest snapshot that is intact, of this log, at or before
  // `snapshot_at_most`, and with the journal going on from it (or, with
  // none, from the start). When none is (the one there damaged, the journal
  // compacted past the older ones) the newest of all rather than no start:
  // r.past_at_most says so, and the odds history then starts again from the
  // state (engine/storage/history_recovery.cc).
  std::map<uint64_t, std::string> candidates = complete_leftovers(dir, files.epoch, read_only);
  for (uint64_t seq : files.snapshots) candidates.emplace(seq, snapshot_path(dir, seq));
  const auto reaches = [&](uint64_t seq) { return files.segments.empty() || files.segments.front() <= seq + 1; };
  const auto load = [&](uint64_t seq, const std::string& path) {
    SnapshotInfo info;
    std::string err;
    if (!check_snapshot_file(path, info, err)) {
      r.skipped_snapshots.push_back(err);
      return false;
    }
    if (info.epoch != r.epoch || info.seq != seq) {
      r.skipped_snapshots.push_back(path + ": of another log (epoch " + info.epoch + ") or misnamed");
      return false;
    }
    if (!load_snapshot_file(path, engine, info, err))
      throw std::runtime_error("snapshot passed its checks but did not load: " + err);
    r.snapshot_seq = info.seq;
    r.snapshot_events = info.events;
    r.snapshot_retain_ended_ms = info.retain_ended_ms;
    return true;
  };
  const auto split = std::make_reverse_iterator(candidates.upper_bound(from.snapshot_at_most));
  bool loaded = false;
  for (auto it = split; it != candidates.rend() && !loaded; ++it)
    if (reaches(it->first)) loaded = load(it->first, it->second);
  if (!loaded && !reaches(0))
    for (auto it = candidates.rbegin(); it != split && !loaded; ++it)
      r.past_at_most = loaded = load(it->first, it->second);
  engine.set_epoch(r.epoch);

  // Then every record after it, segment by segment.
  uint64_t pos = r.snapshot_seq;
  for (size_t i = 0; i < files.segments.size(); ++i) {
    const uint64_t first = files.segments[i];
    const uint64_t next = i + 1 < files.segments.size() ? files.segments[i + 1] : UINT64_MAX;
    if (next != UINT64_MAX && next - 1 <= pos) continue;  // wholly inside the snapshot
    if (first > pos + 1)
      throw std::runtime_error("data dir " + dir + ": the log has a gap before position " + std::to_string(first) +
                               " (state reaches " + std::to_string(pos) + ")");
    const bool last = next == UINT64_MAX;
    SegmentReplay s = replay_segment(segment_path(dir, first), first, pos, engine, last && !read_only, from.on_batch);
    r.replayed += s.applied;
    r.bad_records += s.bad_records;
    if (s.torn_tail) {
      r.torn_tail = true;
      r.truncated_bytes += s.truncated_bytes;
    }
    pos = std::max(pos, first - 1 + s.records);
    if (!last && pos + 1 != next)
      throw std::runtime_error("data dir " + dir + ": segment " + std::to_string(first) + " ends at " +
                               std::to_string(pos) + " but the next starts at " + std::to_string(next));
    r.tail_segment = first;
  }
  engine.commit();
  engine.publish_restored();  // the epoch is part of the state even when the log is empty
  SnapshotPtr now = engine.current();
  r.seq = now->seq;
  if (r.seq != pos)
    throw std::runtime_error("data dir " + dir + ": recovered to position " + std::to_string(r.seq) +
                             " but the log reaches " + std::to_string(pos));
  if (!read_only) remove_leftovers(dir);
  r.millis = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace oddsrelay
