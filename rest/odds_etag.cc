#include "rest/odds_etag.h"

#include <xxhash.h>

#include <cstdio>

namespace oddsrelay::rest {

std::string odds_etag(uint64_t seed, const std::vector<const EventEntry*>& events) {
  std::vector<uint64_t> words;
  words.reserve(2 * events.size());
  for (const EventEntry* e : events) {
    words.push_back(e->number);
    words.push_back(e->edit);
  }
  const uint64_t h = XXH3_64bits_withSeed(words.data(), words.size() * sizeof(uint64_t), seed);
  char tag[24];
  std::snprintf(tag, sizeof tag, "W/\"%016llx\"", static_cast<unsigned long long>(h));
  return tag;
}

}  // namespace oddsrelay::rest
