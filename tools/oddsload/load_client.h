// The subscriber side of the relay benchmarks: N WebSocket connections on
// one libuv loop, each parsing every frame it gets. /pt-ws: INFO frames
// close each turn's batches ({"seq","from","at"}); the client checks that
// consecutive INFOs leave no gap (or say they conflated) and takes the
// delivery latency of the turn as now - arrived_us (else now - at); per odds channel, that line
// times ("ls") never go back; INFO stamps (applied_us, encoded_us) split
// the latency into stages. /ws: every message is counted;
// latency from the `ts` of live_update and market messages. Optionally one
// extra connection forwards what it receives to an nchan publisher (the
// baseline of perf/relay), stamping `at` with the moment it publishes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/oddsload/histogram.h"

namespace oddsrelay::load {

struct LoadOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;
  std::string path = "/pt-ws?protocol=v2";  // api_key appended when given
  std::string api_key;
  // --compress: offer permessage-deflate and inflate what comes compressed.
  bool compress = false;
  // --sse: `path` is /pt-sse; the frames come as Server-Sent Events.
  bool sse = false;
  // --filter-file: subscriber i appends queries[i % size] to `path` (many
  // distinct events=/markets= filters from one process); empty: none.
  std::vector<std::string> queries;
  uint32_t connections = 100;
  double duration_s = 10;
  double warmup_s = 1;           // latency before this is not counted
  uint32_t connect_rate = 2000;  // new connections per second
  double progress_s = 1;         // progress line interval on stderr; 0 = off
  // Forwarder: also subscribe once to `path` on host:port and POST every
  // frame after the connect snapshot to http://forward_host:forward_port/forward_path.
  bool forward = false;
  std::string forward_host = "127.0.0.1";
  uint16_t forward_port = 0;
  std::string forward_path = "/pub";
  // Subscribers connect here instead when set (the nchan side).
  uint16_t subscribe_port = 0;
  std::string subscribe_path;
};

struct LoadResult {
  uint32_t connected = 0, failed = 0, closed_early = 0;
  uint32_t compressed = 0;  // connections that negotiated permessage-deflate
  // bytes: the frame texts (inflated); wire_bytes: what the sockets read.
  uint64_t wire_bytes = 0, wire_bytes_measured = 0;
  uint64_t frames = 0, bytes = 0, infos = 0, gaps = 0, conflated = 0, pings = 0;
  uint64_t out_of_order = 0;  // odds frames older than the channel's previous one
  uint64_t forwarded = 0;
  // The first subscriber's busiest P channel over the measured span (frames
  // on it), and the INFOs it got there: a conflated stream's promise is at
  // most one frame per channel per interval.
  uint64_t busiest_channel_frames = 0, first_infos = 0;
  double seconds = 0;  // measured span (after warm-up)
  uint64_t frames_measured = 0, bytes_measured = 0;
  Histogram latency;  // us, feed record `at` to the subscriber
  // The same span in stages, from the INFO's server stamps (applied_us,
  // encoded_us) where the server sends them: record `at` -> engine applied
  // the group -> relay encoded it -> the subscriber parsed the INFO.
  Histogram record_engine, engine_relay, relay_subscriber;
  std::string error;
};

LoadResult run_load(const LoadOptions& opts);

}  // namespace oddsrelay::load
