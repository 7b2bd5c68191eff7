// oddsclient: the command line of the C++ client (docs/clients.md), the
// same flags, stdout lines and --out file as the Python client's
// (clients/python/oddsclient/__main__.py), so either can stand in for the
// other in a desk's scripts and in the e2e tests.
//
//   oddsclient follow --url http://HOST:PORT --key KEY [filters] [--verify] [--out FILE] ...
//   oddsclient replay FILE [--repeat N]
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "clients/cpp/client.h"
#include "clients/cpp/json_text.h"
#include "clients/cpp/replay.h"
#include "clients/cpp/ws_connection.h"
#include "oddsrelay_version.h"

namespace {

using namespace oddsrelay::client;

constexpr const char* kUsage =
    R"(usage: oddsclient follow --url http://HOST:PORT --key KEY [--events IDS] [--markets IDS]
                        [--sports IDS] [--conflate-ms N] [--compress] [--verify]
                        [--duration S] [--out FILE] [--ping-interval S] [--progress S]
       oddsclient replay FILE [--repeat N]
       oddsclient --version

follow: follows one /pt-ws stream into a replica; one JSON line on stdout per
state change ({"state":"live","epoch":"E","seq":N,"verified":true}) and per
resync ({"resync":"digest_mismatch","seq":N}), a progress line on stderr,
and at exit (--duration, SIGINT, SIGTERM) --out: {"epoch","seq","digest","data"},
the /v1/odds `data` shape of the replica and its digest by the REST formula.
  --url URL             the server, http://HOST:PORT
  --key KEY             the API key
  --events IDS          event ids, comma-separated
  --markets IDS         market ids, comma-separated
  --sports IDS          sport ids, comma-separated
  --conflate-ms N       conflate_ms=N
  --compress            offer permessage-deflate
  --verify              verify=1: check each INFO's digest
  --duration S          seconds, then exit (0: until a signal)
  --out FILE            write the replica here at exit
  --ping-interval S     the server's --ws-ping in seconds: stale after two
                        without a frame (30)
  --progress S          seconds between progress lines on stderr (5)

replay: applies a capture of /pt-ws frames (perf/relay/capture.py's
"<us>\t<frame>" lines) as fast as it can, --repeat N times, and prints one
JSON line: frames and records per second, the speed-up over the pace the
server sent them at, and the final digest.
)";

std::atomic<bool> g_signalled{false};

[[noreturn]] void usage_error(const std::string& why) {
  std::fprintf(stderr, "oddsclient: %s\n%s", why.c_str(), kUsage);
  std::exit(2);
}

double number_arg(const std::string& name, const char* v) {
  char* end = nullptr;
  double d = std::strtod(v, &end);
  if (!*v || *end || d < 0) usage_error(name + ": not a number: " + v);
  return d;
}

struct FollowArgs {
  Options o;
  double duration = 0, progress = 5;
  std::string out;
};

FollowArgs parse_follow(int argc, char** argv) {
  FollowArgs a;
  for (int i = 2; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "--compress" || k == "--verify") {
      (k == "--compress" ? a.o.compress : a.o.verify) = true;
      continue;
    }
    if (i + 1 >= argc) usage_error(k + " needs a value or is unknown");
    const char* v = argv[++i];
    if (k == "--url")
      a.o.url = v;
    else if (k == "--key")
      a.o.key = v;
    else if (k == "--events")
      a.o.events = v;
    else if (k == "--markets")
      a.o.markets = v;
    else if (k == "--sports")
      a.o.sports = v;
    else if (k == "--conflate-ms")
      a.o.conflate_ms = static_cast<unsigned>(number_arg(k, v));
    else if (k == "--duration")
      a.duration = number_arg(k, v);
    else if (k == "--out")
      a.out = v;
    else if (k == "--ping-interval")
      a.o.ping_interval_s = number_arg(k, v);
    else if (k == "--progress")
      a.progress = number_arg(k, v);
    else
      usage_error("unknown option '" + k + "'");
  }
  if (a.o.url.empty() || a.o.key.empty()) usage_error("follow needs --url and --key");
  std::string host;
  uint16_t port;
  if (!split_url(a.o.url, host, port)) usage_error("--url: not http://HOST:PORT: " + a.o.url);
  if (a.o.ping_interval_s <= 0) usage_error("--ping-interval must be above 0");
  return a;
}

void progress_line(const Client& c) {
  size_t events = 0;
  c.read([&](const ReplicaState& r) { events = r.events().size(); });
  const auto seq = c.seq();
  std::fprintf(stderr, "oddsclient: %s seq %s groups %llu events %zu resyncs %llu\n", state_name(c.state()),
               seq ? std::to_string(*seq).c_str() : "None", static_cast<unsigned long long>(c.groups()), events,
               static_cast<unsigned long long>(c.resyncs()));
  std::fflush(stderr);
}

int follow(int argc, char** argv) {
  FollowArgs a = parse_follow(argc, argv);
  a.o.on_event = [](const Event& e) {
    std::string line = event_json(e);
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fflush(stdout);
  };
  struct sigaction sa {};
  sa.sa_handler = [](int) { g_signalled = true; };
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  Client c(a.o);
  c.start();
  using namespace std::chrono;
  const auto t0 = steady_clock::now();
  auto next_progress = t0 + duration<double>(a.progress);
  while (!g_signalled && (a.duration <= 0 || steady_clock::now() - t0 < duration<double>(a.duration))) {
    std::this_thread::sleep_for(milliseconds(20));
    if (a.progress > 0 && steady_clock::now() >= next_progress) {
      progress_line(c);
      next_progress += duration<double>(a.progress);
    }
  }
  c.stop();
  if (a.out.empty()) return 0;
  std::string text;
  if (!out_json(c.view(), text)) {
    std::fprintf(stderr, "oddsclient: the replica holds a market that is not JSON\n");
    return 1;
  }
  std::ofstream f(a.out, std::ios::binary | std::ios::trunc);
  f << text;
  if (!f.flush()) {
    std::fprintf(stderr, "oddsclient: cannot write %s\n", a.out.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "--help" || cmd == "-h") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (cmd == "--version") {
    std::printf("oddsclient %s (commit %s)\n", ODDSRELAY_VERSION, ODDSRELAY_COMMIT);
    return 0;
  }
  for (int i = 2; i < argc; ++i)
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
  if (cmd == "follow") return follow(argc, argv);
  if (cmd == "replay") {
    if (argc < 3) usage_error("replay needs a FILE");
    unsigned repeat = 1;
    for (int i = 3; i < argc; ++i) {
      if (std::string(argv[i]) != "--repeat" || i + 1 >= argc)
        usage_error(std::string("unknown option '") + argv[i] + "'");
      repeat = static_cast<unsigned>(number_arg("--repeat", argv[++i]));
    }
    return replay_main(argv[2], repeat ? repeat : 1);
  }
  usage_error(cmd.empty() ? "a command is needed: follow or replay" : "unknown command '" + cmd + "'");
}
