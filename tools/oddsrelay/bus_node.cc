#include "tools/oddsrelay/bus_node.h"

#include <cinttypes>
#include <cstdio>
#include <ctime>

namespace oddsrelay {

bool join_bus(bus::NatsLink& link, Engine& engine, const sigset_t& sigs, bus::JoinResult& out, std::string& err) {
  std::string last_why;
  bool said_waiting = false;
  for (;;) {
    if (link.connected()) {
      std::string why;
      bool corrupt = false;
      bus::Join j = bus::join_log(link, engine, out, why, corrupt);
      if (j == bus::Join::Joined) return true;
      if (corrupt) return err = "the bus's snapshot does not load: " + why, false;
      if (why != last_why) std::fprintf(stderr, "oddsrelay: bus: cannot join yet: %s\n", why.c_str());
      last_why = why;
    } else if (!said_waiting) {
      std::fprintf(stderr, "oddsrelay: waiting for the bus at %s\n", link.url().server().c_str());
      said_waiting = true;
    }
    timespec ts{0, 300'000'000};
    int sig = sigtimedwait(&sigs, nullptr, &ts);
    if (sig == SIGINT || sig == SIGTERM) return err = "stopped before joining the bus", false;
  }
}

namespace {

// What both roles say first: which they are, and their link to the bus.
void write_link_fields(json::Writer& w, const char* role, const bus::NatsLink& link) {
  w.Key("role");
  w.String(role);
  w.Key("url");
  json::str(w, link.url().str());
  w.Key("connected");
  w.Bool(link.connected());
  w.Key("server");
  json::str(w, link.server());
}

}  // namespace

void write_publisher_status(json::Writer& w, const bus::NatsLink& link, const bus::BusPublisher& p) {
  const bus::PublisherStats& s = p.stats();
  w.StartObject();
  write_link_fields(w, "ingest", link);
  w.Key("stream_warning");
  json::str(w, link.stream_warning());
  w.Key("state");
  json::str(w, p.state());
  w.Key("error");
  json::str(w, p.last_error());
  w.Key("acked_seq");
  w.Uint64(s.acked_seq.load());
  w.Key("sent_seq");
  w.Uint64(s.sent_seq.load());
  w.Key("buffered_messages");
  w.Uint64(s.buffered_messages.load());
  w.Key("buffered_bytes");
  w.Uint64(s.buffered_bytes.load());
  w.Key("messages");
  w.Uint64(s.messages.load());
  w.Key("records");
  w.Uint64(s.records.load());
  w.Key("dropped_records");
  w.Uint64(s.dropped_records.load());
  w.Key("syncs");
  w.Uint64(s.syncs.load());
  w.Key("gaps");
  w.Uint64(s.gaps.load());
  w.Key("errors");
  w.Uint64(s.errors.load());
  w.Key("snapshots");
  w.Uint64(s.snapshots.load());
  w.Key("snapshot_failures");
  w.Uint64(s.snapshot_failures.load());
  w.Key("last_snapshot_seq");
  w.Uint64(s.last_snapshot_seq.load());
  w.Key("last_snapshot_bytes");
  w.Uint64(s.last_snapshot_bytes.load());
  w.Key("last_snapshot_ms");
  w.Uint64(s.last_snapshot_ms.load());
  w.Key("disconnects");
  w.Uint64(link.disconnects());
  w.EndObject();
}

void write_follower_status(json::Writer& w, const bus::NatsLink& link, const BusSource& src) {
  const BusSourceStats& s = src.stats();
  const bus::JoinResult j = src.joined();
  w.StartObject();
  write_link_fields(w, "edge", link);
  w.Key("following");
  w.Bool(!s.stopped.load());
  w.Key("error");
  json::str(w, src.error());
  w.Key("joined_seq");
  w.Uint64(j.seq);
  w.Key("joined_from_snapshot");
  w.Bool(j.from_snapshot);
  w.Key("snapshot_bytes");
  w.Uint64(j.snapshot_bytes);
  w.Key("join_ms");
  w.Double(j.millis);
  w.Key("seq");
  w.Uint64(s.seq.load());
  w.Key("stream_seq");
  w.Uint64(s.stream_seq.load());
  w.Key("pending");
  w.Uint64(s.pending.load());
  w.Key("messages");
  w.Uint64(s.messages.load());
  w.Key("resubscribes");
  w.Uint64(s.resubscribes.load());
  w.Key("old_messages");
  w.Uint64(s.old_messages.load());
  w.Key("read_on");
  w.Uint64(s.read_on.load());
  w.Key("behind");
  w.Bool(s.behind.load());
  w.Key("stalls");
  w.Uint64(s.stalls.load());
  w.Key("rejoining");
  w.Bool(s.rejoining.load());
  w.Key("rejoins");
  w.Uint64(s.rejoins.load());
  w.Key("disconnects");
  w.Uint64(link.disconnects());
  w.EndObject();
}

}  // namespace oddsrelay
