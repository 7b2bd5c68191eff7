#include "engine/bus/bus_join.h"

#include <chrono>

#include "engine/bus/log_reader.h"
#include "engine/bus/snapshot_transfer.h"
#include "engine/storage/snapshot_file.h"

namespace oddsrelay::bus {

Join join_log(NatsLink& link, Engine& engine, JoinResult& out, std::string& why, bool& corrupt) {
  corrupt = false;
  const auto t0 = std::chrono::steady_clock::now();
  StreamState st;
  Got g = link.stream_state(link.url().stream, st, why);
  if (g == Got::Missing) return why = "stream " + link.url().stream + " does not exist yet", Join::NotYet;
  if (g == Got::Failed) return Join::Failed;

  SnapshotHead head;
  g = read_head(link, head, why);
  if (g == Got::Failed) return Join::Failed;
  if (g == Got::Missing) {
    // No snapshot: the log must still hold its first position.
    if (st.msgs == 0) return why = "the log is empty and has no snapshot yet", Join::NotYet;
    LogMessage first;
    g = read_log_message(link, st.first_seq, first, why);
    if (g == Got::Missing) return why = "the log's first message just expired", Join::NotYet;
    if (g == Got::Failed) return Join::Failed;
    if (fit(first, first.epoch, 0) != Fit::Next)
      return why = "no snapshot, and the log stream no longer starts at position 1", Join::NotYet;
    engine.set_epoch(first.epoch);
    engine.publish_restored();
    out.epoch = first.epoch;
    out.seq = 0;
    out.next_stream_seq = st.first_seq;
  } else {
    // The stream must still hold what follows the snapshot, and that must
    // be the same log continuing at seq + 1.
    if (head.stream_seq + 1 < st.first_seq)
      return why = "the newest snapshot (seq " + std::to_string(head.seq) +
                   ") is older than what the log stream keeps: waiting for a newer one",
             Join::NotYet;
    if (head.stream_seq > st.last_seq)
      return why = "the newest snapshot refers past the log stream's end (stream recreated?)", Join::NotYet;
    if (head.stream_seq < st.last_seq) {
      LogMessage next;
      g = read_log_message(link, head.stream_seq + 1, next, why);
      if (g == Got::Failed) return Join::Failed;
      if (g == Got::Ok && fit(next, head.epoch, head.seq) != Fit::Next)
        return why = "the log after the newest snapshot does not continue it (" +
                     std::string(fit_name(fit(next, head.epoch, head.seq))) + "): waiting for a newer snapshot",
               Join::NotYet;
    }
    std::string data;
    g = fetch_snapshot(link, head, data, why);
    if (g == Got::Missing) return why = "the snapshot was replaced while it was read", Join::NotYet;
    if (g == Got::Failed) return Join::Failed;
    SnapshotInfo info;
    if (!load_snapshot_data(data, "bus snapshot " + std::to_string(head.seq), engine, info, why)) {
      corrupt = true;
      return Join::Failed;
    }
    if (info.epoch != head.epoch || info.seq != head.seq) {
      corrupt = true;
      return why = "snapshot file does not match its head", Join::Failed;
    }
    out.epoch = head.epoch;
    out.seq = head.seq;
    out.next_stream_seq = head.stream_seq + 1;
    out.from_snapshot = true;
    out.snapshot_bytes = head.bytes;
    out.snapshot_events = info.events;
    out.chunks = head.chunks;
  }
  out.millis = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return Join::Joined;
}

}  // namespace oddsrelay::bus
