// oddsclient replay: the client's apply path at full speed, for benchmarks
// (perf/client/run.sh) and for perf engineers: a capture of /pt-ws frames
// (perf/relay/capture.py's "<microseconds>\t<frame>" lines, from the first
// INFO after a snapshot) fed to the stream machine as if it followed the
// stream, without a socket.
#pragma once

#include <string>

namespace oddsrelay::client {

struct ReplayResult {
  uint64_t frames = 0, groups = 0, records = 0, resyncs = 0;
  double seconds = 0, captured_seconds = 0;
  std::string digest, error;
};

// Applies the capture `repeat` times (a fresh replica each time).
ReplayResult replay_capture(const std::string& path, unsigned repeat);
// Prints the result as one JSON line; 0, or 1 on an error or a resync.
int replay_main(const std::string& path, unsigned repeat);

}  // namespace oddsrelay::client
