// The values of oddsrelay's flags that have a grammar of their own (a feed
// spec, a duration, a resume window, a size with K/M/G). Apart from the table
// of flags (cli.cc) so that the table reads as a list and these can be tested
// one by one (tests/tools/cli_test.cc).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace oddsrelay {

struct FeedSpec;
struct Options;

bool parse_feed_spec(const std::string& spec, FeedSpec& out, std::string& err);
// --resume-window: "128M,60s", "64M" or "90s" into resume_window_bytes / _s.
bool parse_resume_window(const std::string& spec, Options& out, std::string& err);
// A duration: a whole number followed by d, h, m or s ("96h", "90m", "30s"),
// 1 s to 3650 d, into milliseconds. False for anything else.
bool parse_duration(std::string_view spec, int64_t& ms);

// A whole number, digits only, nothing after them.
bool parse_u64(std::string_view s, uint64_t& out);
bool parse_double(const std::string& s, double& out);
// Takes a K, M or G off the end of `num` and returns its factor (1 without one).
uint64_t take_size_suffix(std::string_view& num);

}  // namespace oddsrelay
