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

metrics::StatTable<bus::PublisherStats> publisher_stats() {
  using S = bus::PublisherStats;
  using metrics::Type;
  static constexpr metrics::Stat<S> kPublisherStats[] = {
      {"acked_seq", &S::acked_seq},
      {"sent_seq", &S::sent_seq},
      {"buffered_messages", &S::buffered_messages},
      {"buffered_bytes",
       &S::buffered_bytes,
       {"oddsrelay_bus_buffered_bytes", Type::Gauge, "Bytes of records held for the bus."}},
      {"messages", &S::messages},
      {"records", &S::records},
      {"dropped_records", &S::dropped_records},
      {"syncs", &S::syncs},
      {"gaps", &S::gaps},
      {"errors", &S::errors},
      {"snapshots", &S::snapshots},
      {"snapshot_failures", &S::snapshot_failures},
      {"last_snapshot_seq", &S::last_snapshot_seq},
      {"last_snapshot_bytes", &S::last_snapshot_bytes},
      {"last_snapshot_ms", &S::last_snapshot_ms},
  };
  return kPublisherStats;
}

metrics::StatTable<BusSourceStats> follower_stats() {
  using S = BusSourceStats;
  using metrics::Type;
  static constexpr metrics::Stat<S> kFollowerStats[] = {
      {"seq", &S::seq},
      {"stream_seq", &S::stream_seq},
      {"pending",
       &S::pending,
       {"oddsrelay_bus_pending_messages", Type::Gauge,
        "Messages of the log stream beyond this edge's position (each holds one batch)."}},
      {"messages", &S::messages},
      {"resubscribes", &S::resubscribes},
      {"old_messages", &S::old_messages},
      {"read_on", &S::read_on},
      {"read_on_messages", &S::read_on_messages},
      {"stalls",
       &S::stalls,
       {"oddsrelay_bus_stalls_total", Type::Counter,
        "Times this edge heard nothing for --bus-stale-after while the stream moved on."}},
      {"rejoins", &S::rejoins},
  };
  return kFollowerStats;
}

void write_publisher_status(json::Writer& w, const bus::NatsLink& link, const bus::BusPublisher& p) {
  w.StartObject();
  write_link_fields(w, "ingest", link);
  w.Key("stream_warning");
  json::str(w, link.stream_warning());
  w.Key("state");
  json::str(w, p.state());
  w.Key("error");
  json::str(w, p.last_error());
  metrics::write_status_fields(w, p.stats(), publisher_stats());
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
  metrics::write_status_fields(w, s, follower_stats());
  w.Key("behind");
  w.Bool(s.behind.load());
  w.Key("rejoining");
  w.Bool(s.rejoining.load());
  w.Key("disconnects");
  w.Uint64(link.disconnects());
  w.EndObject();
}

}  // namespace oddsrelay
