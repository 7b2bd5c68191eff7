// A snapshot file: the whole engine state at one log position, written in
// the feed format so that it is a readable JSON Lines file like every other
// log file here (docs/architecture.md "The log"). Compaction writes one from
// an immutable Snapshot on its own thread (no pause for the engine); a
// restart loads the newest valid one and replays the journal after it.
//
//   {"op":"header","format":"oddsfeed","version":1,"provider":"s7",
//    "kind":"snapshot","epoch":E,"seq":N,"clock":T,"last_live_at":T,
//    "feed_clock":T,"evicted":K,"retain_ended":MS}
//   {"at":T,"op":"state","id":KEY,"n":NUMBER, "event":{..}, "markets":[..],
//    "score":{..}, "stats":{..}, "withdrawn":{..}}      one line per event
//   {"op":"end","events":K,"seq":N}
//
// Every line carries the journal's `xxh` checksum; a file with a bad or
// missing line, or without its `end` line, is not a snapshot (the caller
// falls back to an older one). A `state` line carries what the engine
// derived (outcome ts and previous price, line ls, the score timeline and
// settlement anchor, the lines withdrawn before full time) so that loading gives the same state digest as the
// records that built it. `feed_clock` (the newest `at` applied) and
// `evicted` are retention's state (engine/core/retention.h): the engine goes on
// evicting at the same records after a load. `retain_ended` records the
// horizon the state was kept with, for the operator (a restart uses its own
// --retain-ended). A header of the log's first version lacks the three:
// feed_clock is then taken as the newest `at` in the file, evicted as 0.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/engine.h"

namespace oddsrelay {

struct SnapshotInfo {
  std::string epoch;
  uint64_t seq = 0;
  uint64_t events = 0;
  uint64_t bytes = 0;
  int64_t retain_ended_ms = 0;  // 0: not recorded
  uint64_t evicted = 0;
  uint64_t copied = 0;  // written: state lines copied from the previous file (SnapshotLayout)
};

// Where each event's `state` line sits in the last snapshot file this
// process wrote. A state line depends on its entry alone, and an entry the
// engine has published is never changed (a change makes a new entry with a
// newer `edit`), so the next snapshot copies the line of every event whose
// number, edit and updated_at are the same, checksum verified, instead of
// encoding it again: at a feed that changes a few percent of the events
// between two snapshots, writing one costs little more than its I/O. Only
// valid with the one Engine whose snapshots are written (edits are that
// engine's batch numbers).
struct SnapshotLayout {
  struct Line {
    uint64_t number = 0, edit = 0;
    int64_t updated_at = 0;
    uint64_t offset = 0;
    uint32_t length = 0;  // with its newline
  };
  std::string path;         // empty: nothing to copy from
  std::vector<Line> lines;  // ascending number, as in the file
};

// Writes `s` to `path` atomically: a temporary file, fsync, rename, fsync of
// the directory. False with `err` set on any I/O failure (nothing is left at
// `path` then).
// With `layout`: copies what it can from the file `layout` describes (a line
// that is missing or fails its checksum there is encoded instead), then
// describes the new file in it (cleared on failure). `renamed` runs right
// after the rename, before the directory's fsync, so that what it deletes
// there goes in the same fsync (compaction: the data dir never holds the
// older snapshots beside the new one for longer than a few unlinks).
bool write_snapshot_file(const Snapshot& s, const std::string& path, SnapshotInfo& info, std::string& err,
                         SnapshotLayout* layout = nullptr, const std::function<void()>& renamed = {});

// Encodes `s` in the snapshot file format, handing the bytes to `flush` in
// pieces of about 1 MiB (flush consumes and clears them); returns the number
// of events written. The bus publisher sends the same bytes in chunks.
uint64_t encode_snapshot(const Snapshot& s, const std::function<void(std::string&)>& flush);

// Checks that `path` is a complete, intact snapshot (every checksum, the
// header, the end line) without building any state: a restart picks the
// newest file that passes, before it touches the engine.
bool check_snapshot_file(const std::string& path, SnapshotInfo& info, std::string& err);

// Loads a snapshot file into `engine` (which must be fresh) and publishes it.
// False with `err` saying why when the file is not a complete, intact
// snapshot; `engine` must then be discarded.
bool load_snapshot_file(const std::string& path, Engine& engine, SnapshotInfo& info, std::string& err);

// The same from the bytes of a snapshot file held in memory (fetched from
// the bus); `name` is what errors call it.
bool load_snapshot_data(std::string_view data, const std::string& name, Engine& engine, SnapshotInfo& info,
                        std::string& err);

// Reads only the header: for listing a data dir.
bool read_snapshot_header(const std::string& path, SnapshotInfo& info, std::string& err);

}  // namespace oddsrelay
