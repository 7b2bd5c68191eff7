// The process basics every Prometheus client library exports under the
// standard process_* names (so dashboards and alerts made for them work),
// read from /proc at scrape time: resident memory, CPU time, open
// descriptors, start time. Linux only, like the rest of the server.
#pragma once

#include <cstdint>

#include "protocol/metrics/text_format.h"

namespace oddsrelay::metrics {

// `started_ms`: the process's start, Unix milliseconds.
void write_process(TextWriter& w, int64_t started_ms);

// Resident set size in bytes (0 when /proc cannot be read).
uint64_t resident_bytes();

}  // namespace oddsrelay::metrics
