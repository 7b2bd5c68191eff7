// libFuzzer target for what an edge reads off the bus (protocol/bus_contract.h):
// a log message's payload split into lines, each parsed as a feed record
// (the same FeedParser a replay uses), its message id, and a snapshot head.
// Any bytes: a record, a counted refusal, never a crash; a head that parses
// has every field the transfer needs.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "protocol/bus_contract.h"
#include "protocol/feed_reader.h"

using namespace oddsrelay;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static feed::FeedParser parser;
  std::string_view payload(reinterpret_cast<const char*>(data), size);
  size_t lines = 0;
  bus::for_each_line(payload, [&](std::string_view line) {
    ++lines;
    feed::Record rec;
    if (parser.parse(line, rec) == feed::LineStatus::Malformed && parser.error().empty()) std::abort();
  });
  if (lines != bus::count_lines(payload)) std::abort();
  std::string epoch;
  uint64_t seq = 0;
  if (bus::parse_msg_id(payload, epoch, seq) && epoch.empty()) std::abort();
  bus::SnapshotHead head;
  std::string err;
  if (bus::parse_head(payload, head, err)) {
    if (head.epoch.empty() || head.chunks == 0 || head.xxh.size() != 16) std::abort();
  } else if (err.empty()) {
    std::abort();
  }
  return 0;
}
