// What oddsload reads out of a frame: the numbers of an INFO's flat JSON
// object, and the newest line time ("ls") of an odds frame. The load client
// reads every frame hundreds of subscribers get on one core, so each frame
// is read in one pass: when it ran a search per key and strtod per number,
// reading was a third of its core at 300 subscribers, and a saturated client
// measures itself, not the server (perf/PROFILE.md s39).
#pragma once

#include <cstdint>
#include <string_view>

namespace oddsrelay::load {

// The fields of an INFO body the client uses; has_* says which it carried.
struct InfoFields {
  bool ready = false;  // the connect INFO ("ready":true), whatever its value
  bool has_seq = false, has_from = false, has_at = false, has_conflated = false;
  bool has_arrived = false, has_applied = false, has_encoded = false;
  double seq = 0, from = 0, at = 0, conflated = 0;
  double arrived_us = 0, applied_us = 0, encoded_us = 0;
};

// Reads the top-level members of a JSON object with RapidJSON's SAX reader;
// members it does not use (strings, arrays, objects) pass by. False if `body`
// is not a whole JSON object (the fields read before stay set); bytes after
// the object are not read.
bool read_info(std::string_view body, InfoFields& out);

// The largest value of any "ls": member in `json` (0: none).
int64_t newest_ls(std::string_view json);

}  // namespace oddsrelay::load
