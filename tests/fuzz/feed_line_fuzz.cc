// libFuzzer target for the feed-format line parser and writer: any line
// either fails with a reason or parses into a record whose canonical
// encoding parses again to the same encoding.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "protocol/feed_reader.h"
#include "protocol/feed_writer.h"

using namespace oddsrelay::feed;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static FeedParser parser;
  Record rec;
  std::string_view line(reinterpret_cast<const char*>(data), size);
  if (parser.parse(line, rec) != LineStatus::Record) return 0;
  std::string once, twice;
  write_record(rec, once);
  Record again;
  if (parser.parse(once, again) != LineStatus::Record) std::abort();
  write_record(again, twice);
  if (once != twice) std::abort();
  return 0;
}
