// The writing half of a snapshot file (snapshot_file.h): the header, one
// `state` line per event and the `end` line, each with its checksum; with a
// layout of the previous file, unchanged events' lines are copied from it.
// Compaction runs this on its own thread from an immutable Snapshot.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "engine/storage/fs_util.h"
#include "engine/storage/snapshot_file.h"
#include "protocol/feed_reader.h"
#include "protocol/feed_writer.h"
#include "protocol/json_chunk.h"
#include "protocol/json_out.h"

namespace oddsrelay {
namespace {

// [[id, [[key, s, ls, [[id, price, flags, prev_price, ts], ...]], ...]], ...]:
// most of a snapshot's bytes, so written by hand (json_chunk.h): the bytes
// RapidJSON's writer wrote value by value, so files are the same as before
// line for line; tests/storage/snapshot_file_test.cc loads them back.
void append_markets(std::string& out, const MarketList& markets) {
  using json::put_int;
  constexpr size_t kMaxOutcome = 2 + 10 + 1 + 11 + 1 + 10 + 1 + 11 + 1 + json::kMaxInt + 1;
  constexpr size_t kMaxMarketHead = 2 + 10 + 2;
  constexpr size_t kMaxLineHead = 2 + json::kMaxKeyJson + 1 + 3 + 1 + json::kMaxInt + 2;
  json::Chunk c(out);
  char* p = c.room(1);
  *p++ = '[';
  c.done(p);
  for (const MarketRef& m : markets) {
    p = c.room(kMaxMarketHead);
    if (&m != markets.data()) *p++ = ',';
    *p++ = '[';
    p = put_int(p, m.id);
    *p++ = ',';
    *p++ = '[';
    c.done(p);
    for (const Line& l : m->lines) {
      p = c.room(kMaxLineHead);
      if (&l != m->lines.data()) *p++ = ',';
      *p++ = '[';
      p = json::put_str(p, l.key.view());
      *p++ = ',';
      p = put_int(p, unsigned{l.suspended});
      *p++ = ',';
      p = put_int(p, l.ls);
      *p++ = ',';
      *p++ = '[';
      c.done(p);
      for (uint32_t i = l.first; i < l.first + l.count; ++i) {
        const Outcome& o = m->outcomes[i];
        p = c.room(kMaxOutcome);
        if (i != l.first) *p++ = ',';
        *p++ = '[';
        p = put_int(p, o.id);
        *p++ = ',';
        p = put_int(p, o.price);
        *p++ = ',';
        p = put_int(p, o.flags);
        *p++ = ',';
        p = put_int(p, o.prev_price);
        *p++ = ',';
        p = put_int(p, o.ts);
        *p++ = ']';
        c.done(p);
      }
      p = c.room(2);
      *p++ = ']';
      *p++ = ']';
      c.done(p);
    }
    p = c.room(2);
    *p++ = ']';
    *p++ = ']';
    c.done(p);
  }
  p = c.room(1);
  *p++ = ']';
  c.done(p);
}

void write_markets(json::Writer& w, const MarketList& markets) {
  w.raw(rapidjson::kArrayType, [&](std::string& out) { append_markets(out, markets); });
}

// A nested feed record (event, score or stats) written by the feed writer,
// so that the loader parses it with the feed parser: one codec for both.
template <class Body>
void write_nested(json::Writer& w, const char* key, int64_t at, const std::string& id, Body&& body,
                  std::string& scratch) {
  feed::Record r;
  r.at = at;
  r.id = id;
  r.body = std::forward<Body>(body);
  scratch.clear();
  feed::write_record(r, scratch);
  w.Key(key);
  w.RawValue(scratch.data(), scratch.size(), rapidjson::kObjectType);
}

// The end state of a score that ended: its final, and the odds it settles against.
void write_score_end(json::Writer& w, const ScoreState& s) {
  w.Key("end");
  w.StartObject();
  w.Key("v");
  w.Uint(s.final_version);
  w.Key("at");
  w.Int64(s.final_at);
  w.Key("res");
  w.String(feed::result_name(s.final_result));
  w.Key("final");
  if (s.final_score)
    json::pair(w, *s.final_score);
  else
    w.Null();
  w.Key("odds");
  write_markets(w, s.odds_at_end);
  w.EndObject();
}

void write_score(json::Writer& w, const std::string& id, const ScoreState& s, std::string& scratch) {
  w.Key("score");
  w.StartObject();
  write_nested(w, "rec", s.ts, id, s.last, scratch);
  w.Key("tl");
  w.StartArray();
  for (const ScorePoint& p : s.timeline) {
    w.StartArray();
    w.Int64(p.at);
    w.Int(p.home);
    w.Int(p.away);
    json::str(w, p.clock);
    w.EndArray();
  }
  w.EndArray();
  if (s.ended) write_score_end(w, s);
  w.EndObject();
}

void write_entry(const EventEntry& e, std::string& out, std::string& scratch) {
  feed::append_checksummed_line(out, [&](json::Writer& w) {
    feed::write_record_head(w, e.updated_at, "state", e.key);
    w.Key("n");
    w.Uint64(e.number);
    if (e.info) write_nested(w, "event", e.updated_at, e.key, e.info, scratch);
    if (!e.markets.empty()) {
      w.Key("markets");
      write_markets(w, e.markets);
    }
    if (const LineHistory* h = e.history.get()) {  // withdrawn lines, as last read
      w.Key("withdrawn");
      w.StartObject();
      w.Key("dropped");
      w.Uint(h->dropped);
      w.Key("markets");
      MarketList unpacked;
      write_markets(w, history_markets(*h, unpacked));
      w.EndObject();
    }
    if (const ScoreState* s = e.score.get()) write_score(w, e.key, *s, scratch);
    if (const StatsState* st = e.stats.get()) {
      feed::StatsRec sr;
      sr.values = st->values;
      sr.final = st->final;
      write_nested(w, "stats", st->ts, e.key, std::move(sr), scratch);
    }
  });
}

void write_header(const Snapshot& s, std::string& out) {
  feed::append_checksummed_line(out, [&](json::Writer& w) {
    feed::write_header_fields(w, "s7");
    w.Key("kind");
    w.String("snapshot");
    w.Key("epoch");
    json::str(w, s.epoch);
    w.Key("seq");
    w.Uint64(s.seq);
    w.Key("clock");
    w.Int64(s.clock);
    w.Key("last_live_at");
    w.Int64(s.last_live_at);
    w.Key("feed_clock");
    w.Int64(s.feed_clock);
    w.Key("evicted");
    w.Uint64(s.evicted);
    w.Key("retain_ended");
    w.Int64(s.retain_ended_ms);
  });
}

// Reads ranges of the previous snapshot file, in ascending order, through
// one buffer of about 1 MiB.
class PreviousFile {
 public:
  explicit PreviousFile(const std::string& path)
      : fd_(path.empty() ? -1 : ::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~PreviousFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  PreviousFile(const PreviousFile&) = delete;
  PreviousFile& operator=(const PreviousFile&) = delete;
  bool ok() const { return fd_ >= 0; }

  // The line at [offset, offset + length) if it is whole and passes its
  // checksum; empty otherwise.
  std::string_view line(uint64_t offset, uint32_t length) {
    if (fd_ < 0 || length < 2) return {};
    if (offset < at_ || offset + length > at_ + buf_.size()) {
      buf_.resize(std::max<size_t>(length, 1 << 20));
      ssize_t n = ::pread(fd_, buf_.data(), buf_.size(), static_cast<off_t>(offset));
      at_ = offset;
      buf_.resize(n > 0 ? static_cast<size_t>(n) : 0);
      if (buf_.size() < length) return {};
    }
    std::string_view l(buf_.data() + (offset - at_), length);
    if (l.back() != '\n' || feed::verify_checksum(l.substr(0, length - 1)) != feed::ChecksumState::Valid) return {};
    return l;
  }

 private:
  int fd_;
  std::string buf_;
  uint64_t at_ = 0;
};

// encode_snapshot, and with `reuse` the copying writer: `prev` describes
// the file `from` reads, `next` receives the new file's layout.
uint64_t encode(const Snapshot& s, const std::function<void(std::string&)>& flush, const SnapshotLayout* prev,
                PreviousFile* from, SnapshotLayout* next, uint64_t& copied) {
  std::string out, scratch;
  out.reserve(1 << 20);
  uint64_t flushed = 0;  // bytes handed to flush so far: the file offset of out[0]
  auto emit = [&] {
    flushed += out.size();
    flush(out);
  };
  write_header(s, out);
  uint64_t events = 0;
  // Sorted by number: the same state always gives the same file.
  std::vector<const EventEntry*> entries;
  entries.reserve(s.events.size());
  s.events.for_each([&](const EventEntry& e) { entries.push_back(&e); });
  std::sort(entries.begin(), entries.end(), [](auto* a, auto* b) { return a->number < b->number; });
  if (next) {
    next->lines.clear();
    next->lines.reserve(entries.size());
  }
  size_t p = 0;  // walks prev->lines along with the entries (both by number)
  for (const EventEntry* e : entries) {
    const size_t start = out.size();
    bool done = false;
    if (prev && from) {
      while (p < prev->lines.size() && prev->lines[p].number < e->number) ++p;
      if (p < prev->lines.size()) {
        const SnapshotLayout::Line& l = prev->lines[p];
        if (l.number == e->number && l.edit == e->edit && l.updated_at == e->updated_at) {
          std::string_view bytes = from->line(l.offset, l.length);
          if (!bytes.empty()) {
            out.append(bytes);
            ++copied;
            done = true;
          }
        }
      }
    }
    if (!done) write_entry(*e, out, scratch);
    if (next)
      next->lines.push_back(
          {e->number, e->edit, e->updated_at, flushed + start, static_cast<uint32_t>(out.size() - start)});
    ++events;
    if (out.size() >= (1 << 20)) emit();
  }
  feed::append_checksummed_line(out, [&](json::Writer& w) {
    w.Key("op");
    w.String("end");
    w.Key("events");
    w.Uint64(events);
    w.Key("seq");
    w.Uint64(s.seq);
  });
  emit();
  return events;
}

}  // namespace

uint64_t encode_snapshot(const Snapshot& s, const std::function<void(std::string&)>& flush) {
  uint64_t copied = 0;
  return encode(s, flush, nullptr, nullptr, nullptr, copied);
}

bool write_snapshot_file(const Snapshot& s, const std::string& path, SnapshotInfo& info, std::string& err,
                         SnapshotLayout* layout, const std::function<void()>& renamed) {
  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (layout) *layout = {};
    return err = "cannot create " + tmp + ": " + std::strerror(errno), false;
  }
  uint64_t bytes = 0, copied = 0;
  bool ok = true;
  SnapshotLayout next;
  uint64_t events;
  {
    PreviousFile from(layout ? layout->path : std::string());
    events = encode(
        s,
        [&](std::string& out) {
          if (ok && !write_fully(fd, out, err)) ok = false;
          bytes += out.size();
          out.clear();
        },
        layout && from.ok() ? layout : nullptr, &from, layout ? &next : nullptr, copied);
  }
  if (ok && ::fsync(fd) != 0) {
    err = "fsync " + tmp + ": " + std::strerror(errno);
    ok = false;
  }
  ::close(fd);
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) {
    err = "rename " + tmp + ": " + std::strerror(errno);
    ok = false;
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    if (layout) *layout = {};
    return false;
  }
  if (layout) {
    next.path = path;
    *layout = std::move(next);
  }
  if (renamed) renamed();
  sync_dir_of(path);
  info.epoch = s.epoch;
  info.seq = s.seq;
  info.events = events;
  info.bytes = bytes;
  info.copied = copied;
  return true;
}

}  // namespace oddsrelay
