// oddsfeed's commands on the bus (docs/bus.md): `publish` is the upstream
// adapter path (feed-format records onto the log stream, with the same
// positions, Msg-Ids and snapshots an ingest node writes), `digest` reads the
// log back like an edge does and prints its position and state digest.
#pragma once

#include <cstdint>
#include <string>

namespace oddsrelay {

// FILE may be "-" for standard input. Streams that are missing are made
// with `replicas` copies (--publish-replicas). Returns the exit status.
int bus_publish(const std::string& input, const std::string& url, int replicas);
// State digest of the log on the bus at its newest position (or at `upto`).
int bus_digest(const std::string& url, uint64_t upto);

}  // namespace oddsrelay
