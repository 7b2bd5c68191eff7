// What /metrics shows of one oddsrelay node: main() hands over its parts and
// this registers the collectors that read them at scrape time (the same
// counters /v1/status reads, so the two agree: the components' stat tables
// write both), beside the data-path histograms, the REST request counts and
// the process basics. The full list with types and labels is docs/metrics.md.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "engine/bus/bus_publisher.h"
#include "engine/bus/nats_link.h"
#include "engine/core/pipeline.h"
#include "engine/sources/sources.h"
#include "engine/storage/log_writer.h"
#include "protocol/json_out.h"
#include "protocol/metrics/registry.h"
#include "protocol/metrics/stat_table.h"
#include "relay/relay_server.h"
#include "rest/http_server.h"

namespace oddsrelay {

// References to main()'s parts. The parts are made while the listener
// already runs; the collectors read them only once `ready` is set
// (acquire), as the REST routes do; until then only the process, the
// request counts and the histograms are shown, with oddsrelay_ready 0.
struct NodeParts {
  const std::atomic<bool>& ready;
  const Engine& engine;
  const Pipeline* const& pipeline;
  const std::unique_ptr<relay::RelayServer>& relay;
  const std::unique_ptr<LogWriter>& journal;            // null without --data-dir
  const std::unique_ptr<bus::BusPublisher>& publisher;  // null without --publish
  const std::unique_ptr<Source>& source;
  const bus::NatsLink& link;
  const rest::HttpServer& http;
  int64_t started_ms = 0;  // Unix ms
};

void register_node_metrics(metrics::Registry& registry, const NodeParts& parts);

// The journal's LogStats described once (protocol/metrics/stat_table.h):
// the /v1/status "log" fields after data_dir, in order, and the /metrics
// family of those exposed. The log is engine/storage's; the node is where
// its counters meet both views.
metrics::StatTable<LogStats> log_stats();

// /v1/status "log": data_dir and the journal's counters; null without --data-dir.
void write_log_status(json::Writer& w, const LogWriter* journal, const std::string& dir);

}  // namespace oddsrelay
