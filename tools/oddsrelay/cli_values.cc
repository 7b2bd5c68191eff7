#include "tools/oddsrelay/cli_values.h"

#include <charconv>
#include <cstdlib>

#include "protocol/bus_contract.h"
#include "tools/oddsrelay/cli.h"

namespace oddsrelay {

bool parse_u64(std::string_view s, uint64_t& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

bool parse_double(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

uint64_t take_size_suffix(std::string_view& num) {
  if (num.empty()) return 1;
  uint64_t mult = 1;
  switch (num.back()) {
    case 'K':
      mult = 1u << 10;
      break;
    case 'M':
      mult = 1u << 20;
      break;
    case 'G':
      mult = 1u << 30;
      break;
    default:
      return 1;
  }
  num.remove_suffix(1);
  return mult;
}

namespace {

// sim:KEY=N,...: one KEY=N into the simulator's options.
bool parse_sim_option(std::string_view kv, sim::SimOptions& sim) {
  size_t eq = kv.find('=');
  std::string_view k = kv.substr(0, eq), v = eq == std::string_view::npos ? std::string_view() : kv.substr(eq + 1);
  uint64_t n = 0;
  if (k == "seed" && parse_u64(v, n))
    sim.seed = n;
  else if (k == "events" && parse_u64(v, n) && n >= 1 && n <= 1'000'000)
    sim.events = static_cast<uint32_t>(n);
  else if (k == "rate" && parse_u64(v, n) && n >= 1 && n <= 10'000'000)
    sim.rate = static_cast<double>(n);
  else if (k == "minute" && parse_u64(v, n) && n >= 10 && n <= 600'000)
    sim.minute_ms = static_cast<int64_t>(n);
  else if (k == "tick" && parse_u64(v, n) && n >= 10 && n <= 3'600'000)
    sim.tick_ms = static_cast<int64_t>(n);
  else if (k == "correct" && parse_u64(v, n) && n <= 1000)
    sim.correct_permille = static_cast<uint32_t>(n);
  else
    return false;
  return true;
}

// The next comma-separated part of `rest`, taken off it.
std::string_view next_part(std::string_view& rest) {
  size_t comma = rest.find(',');
  std::string_view part = rest.substr(0, comma);
  rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  return part;
}

bool parse_sim_spec(const std::string& spec, FeedSpec& out, std::string& err) {
  out.kind = FeedSpec::Kind::Sim;
  std::string_view rest = spec.size() > 4 ? std::string_view(spec).substr(4) : std::string_view();
  while (!rest.empty()) {
    std::string_view kv = next_part(rest);
    if (!parse_sim_option(kv, out.sim)) {
      err = "bad --feed sim option '" + std::string(kv) +
            "' (seed=N, events=1..1000000, rate=1..10000000, minute=10..600000, tick=10..3600000, correct=0..1000)";
      return false;
    }
  }
  return true;
}

bool parse_replay_spec(const std::string& spec, FeedSpec& out, std::string& err) {
  out.kind = FeedSpec::Kind::Replay;
  std::string rest = spec.substr(7);
  size_t sp = rest.rfind(",speed=");
  if (sp != std::string::npos) {
    std::string v = rest.substr(sp + 7);
    rest.resize(sp);
    if (v == "max")
      out.speed = 0;
    else if (!parse_double(v, out.speed) || !(out.speed > 0) || out.speed > 1e6) {
      err = "bad replay speed '" + v + "' (a positive factor of real time, or max)";
      return false;
    }
  }
  if (rest.empty()) {
    err = "--feed replay: needs a file";
    return false;
  }
  out.path = rest;
  return true;
}

}  // namespace

bool parse_feed_spec(const std::string& spec, FeedSpec& out, std::string& err) {
  if (spec == "sim" || spec.rfind("sim:", 0) == 0) return parse_sim_spec(spec, out, err);
  if (spec.rfind("replay:", 0) == 0) return parse_replay_spec(spec, out, err);
  if (spec == "none") {
    out.kind = FeedSpec::Kind::None;
    return true;
  }
  if (spec.rfind("nats://", 0) == 0) {
    bus::BusUrl url;
    if (!bus::parse_bus_url(spec, url, err)) {
      err = "bad --feed " + spec + ": " + err;
      return false;
    }
    out.kind = FeedSpec::Kind::Bus;
    out.path = spec;
    return true;
  }
  err = "unknown --feed '" + spec +
        "' (sim[:...], replay:FILE[,speed=X], none or nats://HOST:PORT[,HOST:PORT...]/STREAM)";
  return false;
}

bool parse_duration(std::string_view spec, int64_t& ms) {
  if (spec.size() < 2) return false;
  int64_t unit = 0;
  switch (spec.back()) {
    case 'd':
      unit = 86'400'000;
      break;
    case 'h':
      unit = 3'600'000;
      break;
    case 'm':
      unit = 60'000;
      break;
    case 's':
      unit = 1000;
      break;
    default:
      return false;
  }
  uint64_t n = 0;
  if (!parse_u64(spec.substr(0, spec.size() - 1), n) || n == 0 ||
      n > 3650ull * 86'400'000 / static_cast<uint64_t>(unit))
    return false;
  ms = static_cast<int64_t>(n) * unit;
  return true;
}

bool parse_resume_window(const std::string& spec, Options& out, std::string& err) {
  std::string_view rest = spec;
  bool any = false;
  while (!rest.empty()) {
    std::string_view part = next_part(rest);
    bool seconds = !part.empty() && part.back() == 's';
    if (seconds) part.remove_suffix(1);
    uint64_t n = 0, mult = seconds ? 1 : take_size_suffix(part);
    if (!parse_u64(part, n) || (seconds && (n < 1 || n > 86400)) ||
        (!seconds && (n * mult < 1 << 16 || n > (uint64_t{1} << 40) / mult))) {
      err = "bad --resume-window '" + spec + "' (e.g. 128M,60s: bytes 64K..1T with K/M/G, seconds 1..86400 with s)";
      return false;
    }
    if (seconds)
      out.resume_window_s = static_cast<int64_t>(n);
    else
      out.resume_window_bytes = n * mult;
    any = true;
  }
  if (!any) {
    err = "--resume-window needs a value (e.g. 128M,60s)";
    return false;
  }
  return true;
}

}  // namespace oddsrelay
