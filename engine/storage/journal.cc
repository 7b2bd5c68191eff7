#include "engine/storage/journal.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "engine/storage/feed_file.h"

namespace oddsrelay {

SegmentReplay replay_segment(const std::string& path, uint64_t first, uint64_t after, Engine& engine, bool cut_tail,
                             const OnBatch& on_batch) {
  SegmentReplay r;
  const auto commit = [&] {
    if (BatchPtr b = engine.commit(); b && on_batch) on_batch(*b);
  };
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw std::runtime_error("cannot stat " + path + ": " + std::strerror(errno));
  FeedFileReader reader;
  std::string err;
  if (!reader.open(path, err)) throw std::runtime_error(err);
  uint64_t pending_bad = 0;  // bad lines not yet followed by a good one: the tail, unless one follows
  reader.on_problem([&](uint64_t line, feed::LineStatus, const std::string& why) {
    std::fprintf(stderr, "oddsrelay: journal %s line %llu: %s\n", path.c_str(), static_cast<unsigned long long>(line),
                 why.c_str());
    ++pending_bad;
  });
  feed::Record rec;
  uint64_t pos = first - 1, in_batch = 0;
  while (reader.next(rec)) {
    // Corrupt lines between intact ones were records: they keep their positions.
    for (; pending_bad > 0; --pending_bad) {
      ++pos;
      if (pos > after) {
        commit();
        engine.skip_position();
        in_batch = 0;
      }
    }
    ++pos;
    if (pos > after) {
      engine.apply(std::move(rec));
      ++r.applied;
      // Nothing is served before recovery ends: batches as large as a
      // catch-up's (pipeline.h), so the replay pays few snapshots.
      if (++in_batch == Pipeline::kCatchUpBatch) {
        commit();
        in_batch = 0;
      }
    }
    rec = feed::Record{};
  }
  commit();
  if (!reader.fatal().empty()) throw std::runtime_error("journal " + path + ": " + reader.fatal());
  r.records = pos - (first - 1);
  r.bad_records = reader.stats().malformed;
  if (pending_bad != 0 && reader.good_end() < static_cast<uint64_t>(st.st_size)) {
    r.torn_tail = true;
    r.truncated_bytes = static_cast<uint64_t>(st.st_size) - reader.good_end();
    if (cut_tail && ::truncate(path.c_str(), static_cast<off_t>(reader.good_end())) != 0)
      throw std::runtime_error("cannot truncate torn journal tail: " + std::string(std::strerror(errno)));
  }
  return r;
}

}  // namespace oddsrelay
