// The timings only the data path can take, kept process-wide so that the
// hooks in the pipeline and the relay are one line each:
// - batch apply time: the engine thread, from taking a batch of records off
//   its queue to sealing it (one observation per batch);
// - delivery time: from that same start (Batch::apply_start_ns) to the relay
//   loop's turn that hands the batch's frames to the /pt-ws subscribers'
//   sockets (one observation per batch per relay loop, only for turns that
//   had subscribers). It spans apply, the journal write, the hand-off to the
//   relay, encoding and the write: what a client waits for once a record is
//   in the engine.
#pragma once

#include <cstdint>

#include "protocol/metrics/instruments.h"
#include "protocol/metrics/text_format.h"

namespace oddsrelay::metrics {

// The clock of Batch::apply_start_ns: steady, in nanoseconds.
int64_t steady_ns();

Histogram& batch_apply();
Histogram& delivery();

// Relay loop thread: a batch whose frames this turn queues (fanout)...
void turn_batch(int64_t apply_start_ns);
// ...and, after the turn's writes, its end: each batch noted since the last
// call is observed in delivery() when `subscribers`, else forgotten.
void turn_written(bool subscribers);

// The two histograms as families.
void write_data_path(TextWriter& w);

}  // namespace oddsrelay::metrics
