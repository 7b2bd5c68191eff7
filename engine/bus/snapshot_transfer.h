// Snapshots beside the log (docs/architecture.md "Scale-out"): the ingest
// puts the snapshot file of a state (engine/storage/snapshot_file.h, the same
// bytes as on disk) on STREAM_SNAP in chunks under the server's max payload,
// then a head naming it; an edge that starts late reads the newest head,
// fetches its chunks, checks them, and loads the state. The two newest
// snapshots are kept: an edge still fetching the older one is not cut off.
#pragma once

#include <string>

#include "engine/bus/nats_link.h"
#include "engine/core/snapshot.h"

namespace oddsrelay::bus {

// Publishes the snapshot of `s` (synchronously, on the caller's thread) and
// then its head; `stream_seq` is the log stream's sequence after which the
// log continues at s.seq + 1. Then purges what is older than the previous
// snapshot. False with `err` set when any publish fails (no head is written
// then, so no edge sees the partial snapshot).
bool put_snapshot(NatsLink& link, const Snapshot& s, uint64_t stream_seq, SnapshotHead& out, std::string& err);

// The newest head: Ok, Missing (no snapshot yet) or Failed.
Got read_head(NatsLink& link, SnapshotHead& out, std::string& err);

// Fetches and checks (chunk headers, size, XXH3) the snapshot `head` names.
// Missing when its chunks were purged meanwhile (a newer head exists).
Got fetch_snapshot(NatsLink& link, const SnapshotHead& head, std::string& data, std::string& err);

}  // namespace oddsrelay::bus
