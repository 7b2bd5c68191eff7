// The cluster's contract on NATS JetStream (docs/bus.md): what
// an ingest node, `oddsfeed publish` or any upstream adapter in another
// language puts on the bus, and what an edge reads back. Names and formats
// only, no I/O: the publisher (engine/bus/bus_publisher.h), the edge follower
// (engine/bus/bus_source.h) and the tests share this one definition.
//
//   stream STREAM          subject STREAM.log       the log: each message holds
//                                                   K >= 1 feed-format record lines,
//                                                   positions N-K+1..N, with
//                                                   Nats-Msg-Id: <epoch>:<N>
//   stream STREAM_SNAP     subject STREAM.snap.<S>  chunks of the snapshot file at S
//                          subject STREAM.snap.head one JSON line naming the newest
//                                                   complete snapshot (SnapshotHead)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace oddsrelay::bus {

// One server of the bus: HOST[:PORT].
struct BusServer {
  std::string host;
  uint16_t port = 4222;
  std::string url() const { return "nats://" + host + ":" + std::to_string(port); }
};

// nats://HOST[:PORT][,HOST[:PORT]...]/STREAM: the servers of one cluster (a
// node connects to the first it reaches, in the order given, and fails over
// to any other), and the log stream's name.
struct BusUrl {
  std::vector<BusServer> servers;
  std::string stream;
  // "nats://h1:p1,nats://h2:p2" (for messages)
  std::string server() const;
  std::vector<std::string> server_urls() const;
  // "nats://h1:p1,h2:p2/STREAM": the canonical form of what was given
  std::string str() const;
};
// False with `err` set (one line) when `url` is not a list of HOST[:PORT]
// (each may repeat the nats:// prefix; no empty item, no duplicate) and a
// stream name of letters, digits, '-' and '_'.
bool parse_bus_url(std::string_view url, BusUrl& out, std::string& err);

inline std::string log_subject(const std::string& stream) { return stream + ".log"; }
inline std::string snapshot_stream(const std::string& stream) { return stream + "_SNAP"; }
inline std::string snapshot_subjects(const std::string& stream) { return stream + ".snap.>"; }
inline std::string snapshot_subject(const std::string& stream, uint64_t seq) {
  return stream + ".snap." + std::to_string(seq);
}
inline std::string head_subject(const std::string& stream) { return stream + ".snap.head"; }

inline constexpr const char* kMsgIdHeader = "Nats-Msg-Id";                            // <epoch>:<last position>
inline constexpr const char* kExpectedLastSeqHeader = "Nats-Expected-Last-Sequence";  // stream seq
inline constexpr const char* kChunkHeader = "Odds-Chunk";                             // <i>/<count>, i from 0

// A log message carries at most this many payload bytes (a batch larger than
// it is split); well under the server's default 1 MiB max_payload.
inline constexpr size_t kMaxMessageBytes = 256 * 1024;
// Snapshot chunks: the snapshot file cut at this many bytes.
inline constexpr size_t kChunkBytes = 512 * 1024;

std::string msg_id(std::string_view epoch, uint64_t seq);
// "<epoch>:<seq>", epoch non-empty and without ':', seq > 0.
bool parse_msg_id(std::string_view id, std::string& epoch, uint64_t& seq);

// The record lines of a log message, in order. Blank lines are skipped; a
// missing final newline is fine.
template <class F>
void for_each_line(std::string_view payload, F&& f) {
  size_t pos = 0;
  while (pos < payload.size()) {
    size_t nl = payload.find('\n', pos);
    if (nl == std::string_view::npos) nl = payload.size();
    std::string_view line = payload.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") != std::string_view::npos) f(line);
    pos = nl + 1;
  }
}
size_t count_lines(std::string_view payload);

// The newest complete snapshot on STREAM_SNAP. `stream_seq` is the STREAM
// sequence of the log message whose last record is at position `seq`, so an
// edge that loaded the snapshot follows the log from stream_seq + 1.
// `first` is the STREAM_SNAP sequence of chunk 0; chunks are contiguous.
struct SnapshotHead {
  std::string epoch;
  uint64_t seq = 0;
  uint64_t stream_seq = 0;
  uint64_t first = 0;
  uint32_t chunks = 0;
  uint64_t bytes = 0;
  uint64_t events = 0;
  std::string xxh;  // XXH3-64 of the whole file, 16 hex digits
};
std::string encode_head(const SnapshotHead& h);
bool parse_head(std::string_view json, SnapshotHead& out, std::string& err);
std::string xxh_hex(std::string_view data);

}  // namespace oddsrelay::bus
