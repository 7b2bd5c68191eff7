// libFuzzer target for the feed-format line parser and writer: any line
// either fails with a reason or parses into a record whose canonical
// encoding parses again to the same encoding; and the SAX fast path for
// market lines (protocol/feed_market_sax.cc) agrees with the DOM path on
// every line: the same status, error, record and unknown-field count.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "protocol/feed_reader.h"
#include "protocol/feed_writer.h"

using namespace oddsrelay::feed;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static FeedParser parser;
  static FeedParser dom;
  dom.fast_markets(false);
  std::string_view line(reinterpret_cast<const char*>(data), size);
  Record rec, slow;
  const uint64_t unknown = parser.unknown_fields(), dom_unknown = dom.unknown_fields();
  const LineStatus st = parser.parse(line, rec);
  if (dom.parse(line, slow) != st || parser.unknown_fields() - unknown != dom.unknown_fields() - dom_unknown)
    std::abort();
  if (st != LineStatus::Record) {
    if (parser.error() != dom.error()) std::abort();
    return 0;
  }
  std::string once, twice;
  write_record(rec, once);
  write_record(slow, twice);
  if (once != twice || rec.at != slow.at || rec.id != slow.id || rec.number != slow.number) std::abort();
  twice.clear();
  Record again;
  if (parser.parse(once, again) != LineStatus::Record) std::abort();
  write_record(again, twice);
  if (once != twice) std::abort();
  return 0;
}
