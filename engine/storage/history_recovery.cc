// The history's part of a restart (engine/storage/history_recovery.h).
#include "engine/storage/history_recovery.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace oddsrelay {

namespace {

// Whether the journal still holds every record after `held`: a snapshot at
// or before it, or the log from its start.
bool journal_reaches(const DataDirFiles& f, uint64_t held) {
  if (std::any_of(f.snapshots.begin(), f.snapshots.end(), [&](uint64_t s) { return s <= held; })) return true;
  return f.segments.empty() ? f.snapshots.empty() : f.segments.front() == 1;
}

}  // namespace

DataDirRecovery recover_with_history(const std::string& dir, Engine& engine, history::HistoryStore& store,
                                     history::HistorySegments& segments, HistoryRecovery& hr) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    throw std::runtime_error("cannot create data dir " + dir + ": " + std::strerror(errno));
  const DataDirFiles files = list_data_dir(dir);
  hr.load = segments.load([&](const history::LoggedBatch& b) { store.apply(b, files.epoch); });
  const uint64_t held = hr.load.seq;
  std::string err;
  // What cannot be rebuilt starts again from the recovered state, as a late
  // edge's history does; its files say so (their base).
  const auto seed_from_state = [&](const DataDirRecovery& r) {
    store.clear();
    store.seed(*engine.current());
    segments.clear();
    if (!segments.start(r.seq + 1, r.seq, err)) throw std::runtime_error(err);
    return r;
  };
  if (!hr.load.from_start)
    hr.why_seeded = "the history files were seeded";
  else if (!journal_reaches(files, held))
    hr.why_seeded = "the journal no longer holds the records after position " + std::to_string(held);
  if (!hr.why_seeded.empty()) return seed_from_state(recover_data_dir(dir, engine));

  if (!segments.start(held + 1, 0, err)) throw std::runtime_error(err);
  RecoverFrom from;
  from.snapshot_at_most = held;
  from.on_batch = [&](const Batch& b) {
    if (b.snapshot->seq <= held) return;
    store.apply_from(b, held + 1);
    const size_t skip = held >= b.first_seq ? std::min<size_t>(held + 1 - b.first_seq, b.records.size()) : 0;
    hr.replayed += b.records.size() - skip;
    segments.add(b.first_seq + skip, b.snapshot->seq, std::span<const feed::Record>(b.records).subspan(skip),
                 history::HistoryStore::evicted(b));
    segments.flush();
  };
  DataDirRecovery r = recover_data_dir(dir, engine, false, from);
  if (r.seq >= held) {
    hr.rebuilt = true;
    // A file goes once the events it holds left, even before an older one:
    // the batch that evicted an event can go while a file before it, kept
    // for another event, still holds that event's records. Rebuilt, such an
    // event would be back for good, in memory and pinning its file; the
    // state says what is held, and the history keeps only that.
    const SnapshotPtr state = engine.current();
    std::vector<uint64_t> gone;
    for (uint64_t n : segments.held_events())
      if (!state->events.find(n)) gone.push_back(n);
    if (!gone.empty()) {
      store.apply(history::LoggedBatch{r.seq + 1, r.seq, {}, gone}, state->epoch);
      segments.forget(gone);
      hr.forgotten = gone.size();
    }
    return r;
  }
  // The files reach past the journal (a power loss took the journal's
  // unsynced tail): points past the state cannot stand.
  hr.why_seeded = "the history files reach position " + std::to_string(held) + ", the journal " + std::to_string(r.seq);
  return seed_from_state(r);
}

}  // namespace oddsrelay
