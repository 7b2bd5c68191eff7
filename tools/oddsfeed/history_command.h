// `oddsfeed history FILE --id EVENT [...]`: the answer GET /v1/odds/history
// would give for a query at the end of a capture, made by applying the
// capture through the server's own engine, pipeline and history recorder
// (engine/history/) and written by the same renderer
// (engine/history/history_answer.h). A perf engineer diffs it with the
// server's answer after a replay of the same file.
#pragma once

#include <cstdint>

namespace oddsrelay {

// argv: what follows `history`. `retain_ended_ms` is the retention horizon
// (--retain-ended, taken out by main). Returns the exit status: 0, 1 (an
// unreadable capture, an unknown event) or 2 (bad arguments).
int history_command(int argc, char** argv, int64_t retain_ended_ms);

}  // namespace oddsrelay
