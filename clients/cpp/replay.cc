// The replay of a capture (replay.h).
#include "clients/cpp/replay.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

#include "clients/cpp/stream_machine.h"
#include "protocol/digest_terms.h"

namespace oddsrelay::client {

namespace {

// The first INFO's `from`: the capture starts right after a group whose
// seq is one less, which the synthetic ready INFO says.
bool first_from(const std::vector<std::string_view>& frames, uint64_t& from) {
  for (std::string_view f : frames) {
    if (!f.starts_with("INFO\x1f")) continue;
    size_t p = f.find("\"from\":");
    if (p == std::string_view::npos) return false;
    from = std::strtoull(f.data() + p + 7, nullptr, 10);
    return true;
  }
  return false;
}

}  // namespace

ReplayResult replay_capture(const std::string& path, unsigned repeat) {
  ReplayResult r;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    r.error = "cannot read " + path;
    return r;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string all = ss.str();
  std::vector<std::string_view> frames;
  uint64_t last_us = 0;
  for (size_t pos = 0; pos < all.size();) {
    size_t eol = all.find('\n', pos);
    if (eol == std::string::npos) eol = all.size();
    std::string_view line(all.data() + pos, eol - pos);
    pos = eol + 1;
    size_t tab = line.find('\t');
    if (tab == std::string_view::npos) continue;
    last_us = std::strtoull(line.data(), nullptr, 10);
    frames.push_back(line.substr(tab + 1));
  }
  uint64_t from = 0;
  if (frames.empty() || !first_from(frames, from) || from == 0) {
    r.error = "no INFO in " + path;
    return r;
  }
  const std::string ready =
      "INFO\x1fPUB\x1f{\"ready\":true,\"seq\":" + std::to_string(from - 1) + ",\"epoch\":\"replay\"}";
  r.captured_seconds = static_cast<double>(last_us) * 1e-6 * repeat;
  const auto t0 = std::chrono::steady_clock::now();
  for (unsigned i = 0; i < repeat; ++i) {
    StreamMachine m({[](const Event& e) {
                       if (e.resync) std::fprintf(stderr, "oddsclient: replay: %s\n", event_json(e).c_str());
                     },
                     {}});
    m.connected();
    m.on_message(ready);
    for (std::string_view f : frames)
      if (m.on_message(f) == StreamMachine::Next::kDrop) break;
    r.frames += frames.size();
    r.groups += m.groups();
    r.resyncs += m.resyncs();
    const auto seq = m.seq();
    r.records += seq ? *seq - (from - 1) : 0;
    r.digest = digest_hex(m.view().digest);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

int replay_main(const std::string& path, unsigned repeat) {
  ReplayResult r = replay_capture(path, repeat);
  if (!r.error.empty()) {
    std::fprintf(stderr, "oddsclient: %s\n", r.error.c_str());
    return 1;
  }
  const double s = r.seconds > 0 ? r.seconds : 1e-9;
  std::printf(
      "{\"frames\":%llu,\"groups\":%llu,\"records\":%llu,\"resyncs\":%llu,\"seconds\":%.4f,\"frames_per_s\":%.0f,"
      "\"records_per_s\":%.0f,\"captured_seconds\":%.3f,\"speedup\":%.1f,\"digest\":\"%s\"}\n",
      static_cast<unsigned long long>(r.frames), static_cast<unsigned long long>(r.groups),
      static_cast<unsigned long long>(r.records), static_cast<unsigned long long>(r.resyncs), r.seconds,
      static_cast<double>(r.frames) / s, static_cast<double>(r.records) / s, r.captured_seconds, r.captured_seconds / s,
      r.digest.c_str());
  return r.resyncs ? 1 : 0;
}

}  // namespace oddsrelay::client
