// The history's part of a restart (engine/storage/history_recovery.h).
#include "engine/storage/history_recovery.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "engine/storage/snapshot_file.h"

namespace oddsrelay {

namespace {

// Whether the journal still holds every record after `held`: a snapshot at
// or before it, or the log from its start.
bool journal_reaches(const DataDirFiles& f, uint64_t held) {
  if (std::any_of(f.snapshots.begin(), f.snapshots.end(), [&](uint64_t s) { return s <= held; })) return true;
  return f.segments.empty() ? f.snapshots.empty() : f.segments.front() == 1;
}

struct Stopped {};

std::string unreadable_seed(const HistoryRecovery& hr) {
  return "the history files were seeded and their seed cannot be read: " + hr.seed_error;
}

// A kept batch is applied in runs: one frame of the files per run, as the
// history thread writes them.
constexpr size_t kBatchesAFrame = 64;

}  // namespace

DataDirRecovery HistoryRestart::recover(const std::string& dir, Engine& engine) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    throw std::runtime_error("cannot create data dir " + dir + ": " + std::strerror(errno));
  const DataDirFiles files = list_data_dir(dir);
  dir_ = dir;
  epoch_ = files.epoch;
  if (const auto synced = history::HistorySegments::synced_through(dir)) {
    after_ = *synced;
  } else {
    load_files(nullptr);
    after_ = hr_.load.seq;
  }
  std::string why;
  if (loaded_ && !hr_.load.from_start)
    why = unreadable_seed(hr_);
  else if (!journal_reaches(files, after_))
    why = "the journal no longer holds the records after position " + std::to_string(after_);
  if (!why.empty()) {
    // What cannot be rebuilt starts from the newest state, unread.
    DataDirRecovery r = recover_data_dir(dir, engine);
    state_ = engine.current();
    epoch_ = r.epoch;
    seed(why);
    return r;
  }
  RecoverFrom from;
  from.snapshot_at_most = after_;
  from.on_batch = [&](const Batch& b) {
    if (b.snapshot->seq <= after_) return;
    const size_t skip = after_ >= b.first_seq ? std::min<size_t>(after_ + 1 - b.first_seq, b.records.size()) : 0;
    history::LoggedBatch lb;
    lb.first_seq = b.first_seq + skip;
    lb.seq = b.snapshot->seq;
    lb.records.assign(b.records.begin() + static_cast<ptrdiff_t>(skip), b.records.end());
    lb.evicted = history::HistoryStore::evicted(b);
    kept_.push_back(std::move(lb));
  };
  DataDirRecovery r = recover_data_dir(dir, engine, false, from);
  state_ = engine.current();
  epoch_ = r.epoch;
  if (r.past_at_most) {
    // The records between the files' end and that snapshot were not
    // replayed: the history cannot be rebuilt to the state, so it starts
    // from it, as when the journal no longer holds them.
    kept_.clear();
    seed("no snapshot at or before position " + std::to_string(after_) + " could be read (" +
         (r.skipped_snapshots.empty() ? std::string("the journal no longer reaches back from one")
                                      : r.skipped_snapshots.front()) +
         "): started from the one at " + std::to_string(r.snapshot_seq));
    return r;
  }
  pending_ = true;
  if (loaded_) finish();
  return r;
}

bool HistoryRestart::finish(const std::atomic<bool>* stop) {
  if (!pending_) return true;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    if (!loaded_) {
      hr_.deferred = true;
      load_files(stop);
    }
    const uint64_t held = hr_.load.seq;
    if (!hr_.load.from_start)
      seed(unreadable_seed(hr_));
    else if (held < after_)
      seed("the history files end at position " + std::to_string(held) + ", before the " + std::to_string(after_) +
           " they were synced through");
    else if (held > state_->seq)
      // A power loss took the journal's unsynced tail: points past the
      // state cannot stand.
      seed("the history files reach position " + std::to_string(held) + ", the journal " + std::to_string(state_->seq));
    else
      rebuild();
    // Files that name more line keys than the store takes (history_store.h).
    if (store_.overflowed()) seed("the history files name more line keys than the history holds");
  } catch (const Stopped&) {
    store_.clear();
    kept_.clear();
    pending_ = false;
    return false;
  } catch (const std::exception& e) {
    if (!hr_.deferred) throw;  // before ready: the start fails, as any unusable data dir's
    // After ready the state is served already: the history goes on from
    // it in memory, and its files are left for the next start.
    hr_.rebuilt = false;
    hr_.why_seeded = std::string(e.what()) + "; the history goes on in memory only";
    store_.clear();
    store_.seed(*state_);
  }
  kept_.clear();
  kept_.shrink_to_fit();
  pending_ = false;
  hr_.millis = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return true;
}

void HistoryRestart::load_files(const std::atomic<bool>* stop) {
  hr_.load = segments_.load(
      [&](const history::LoggedBatch& b) {
        if (stop && stop->load(std::memory_order_relaxed)) throw Stopped{};
        store_.apply(b, epoch_);
      },
      [&](uint64_t base) { return read_seed(base); });
  loaded_ = true;
}

// Before the first file of a seeded history: the store seeded as it was.
bool HistoryRestart::read_seed(uint64_t base) {
  if (seeded_at_ == base) return true;
  if (seeded_at_ != 0) return false;  // files of two seeds: clear() leaves none such
  Engine seed;
  SnapshotInfo info;
  std::string err;
  if (!load_snapshot_file(history_seed_path(dir_, base), seed, info, err)) {
    hr_.seed_error = err;
    return false;
  }
  const SnapshotPtr s = seed.current();
  store_.seed(*s);
  s->events.for_each([&](const EventEntry& e) { seed_events_.push_back(e.number); });
  seeded_at_ = base;
  return true;
}

// As a late edge's history does; the files say so (their base), and the
// state beside them is what the next restart seeds the store with.
void HistoryRestart::seed(const std::string& why) {
  hr_.why_seeded = why;
  store_.clear();
  store_.seed(*state_);
  segments_.clear();
  std::string err;
  if (!segments_.start(state_->seq + 1, state_->seq, err)) throw std::runtime_error(err);
  SnapshotInfo info;
  if (state_->seq != 0 && !write_snapshot_file(*state_, history_seed_path(dir_, state_->seq), info, err))
    hr_.why_seeded += "; its seed was not written (" + err + "): the next restart seeds again";
}

void HistoryRestart::rebuild() {
  const uint64_t held = hr_.load.seq;
  std::string err;
  if (!segments_.start(held + 1, hr_.load.base, err)) throw std::runtime_error(err);
  size_t run = 0;
  for (history::LoggedBatch& b : kept_) {
    if (b.seq <= held) continue;
    if (b.first_seq <= held) {
      b.records.erase(b.records.begin(), b.records.begin() + static_cast<ptrdiff_t>(held + 1 - b.first_seq));
      b.first_seq = held + 1;
    }
    store_.apply(b, epoch_);
    hr_.replayed += b.records.size();
    segments_.add(b.first_seq, b.seq, b.records, b.evicted);
    if (++run % kBatchesAFrame == 0) segments_.flush();
  }
  segments_.flush();
  hr_.rebuilt = true;
  // A file goes once the events it holds left, even before an older one:
  // the batch that evicted an event can go while a file before it, kept
  // for another event, still holds that event's records. Rebuilt, such an
  // event would be back for good, in memory and pinning its file; the
  // state says what is held, and the history keeps only that.
  std::vector<uint64_t> gone, held_events = segments_.held_events();
  held_events.insert(held_events.end(), seed_events_.begin(), seed_events_.end());
  std::sort(held_events.begin(), held_events.end());
  held_events.erase(std::unique(held_events.begin(), held_events.end()), held_events.end());
  for (uint64_t n : held_events)
    if (!state_->events.find(n)) gone.push_back(n);
  if (!gone.empty()) {
    store_.apply(history::LoggedBatch{state_->seq + 1, state_->seq, {}, gone}, epoch_);
    segments_.forget(gone);
    hr_.forgotten = gone.size();
  }
}

DataDirRecovery recover_with_history(const std::string& dir, Engine& engine, history::HistoryStore& store,
                                     history::HistorySegments& segments, HistoryRecovery& hr) {
  HistoryRestart restart(store, segments);
  DataDirRecovery r = restart.recover(dir, engine);
  restart.finish();
  hr = restart.result();
  return r;
}

}  // namespace oddsrelay
