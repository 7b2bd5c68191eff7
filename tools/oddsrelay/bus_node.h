// The server's two roles on the bus, as main() wires them: an edge joins the
// log before it serves anything (waiting for the bus if need be, and still
// answering SIGINT/SIGTERM meanwhile), and both roles report their side of
// the bus in /v1/status ("bus"). Their counters are described once, in a
// table per role (protocol/metrics/stat_table.h), which writes both the
// status fields and the /metrics families (tools/oddsrelay/node_metrics.cc).
#pragma once

#include <signal.h>

#include "engine/bus/bus_join.h"
#include "engine/bus/bus_publisher.h"
#include "engine/bus/bus_source.h"
#include "engine/bus/nats_link.h"
#include "protocol/json_out.h"
#include "protocol/metrics/stat_table.h"

namespace oddsrelay {

// Connects and joins; true once `engine` holds the log's state. False when
// a signal in `sigs` arrived first or the joined snapshot could not load
// (`err` says which).
bool join_bus(bus::NatsLink& link, Engine& engine, const sigset_t& sigs, bus::JoinResult& out, std::string& err);

metrics::StatTable<bus::PublisherStats> publisher_stats();
metrics::StatTable<BusSourceStats> follower_stats();

void write_publisher_status(json::Writer& w, const bus::NatsLink& link, const bus::BusPublisher& p);
void write_follower_status(json::Writer& w, const bus::NatsLink& link, const BusSource& s);

}  // namespace oddsrelay
