// oddsfeed's history command (tools/oddsfeed/history_command.h).
#include "tools/oddsfeed/history_command.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "engine/core/engine.h"
#include "engine/core/pipeline.h"
#include "engine/history/candles.h"
#include "engine/history/history_answer.h"
#include "engine/history/history_recorder.h"
#include "engine/history/history_store.h"
#include "engine/sources/read_ahead.h"
#include "engine/storage/feed_file.h"
#include "protocol/api/envelope.h"
#include "protocol/api/errors.h"
#include "protocol/event_id.h"
#include "tools/oddsfeed/record_progress.h"

namespace oddsrelay {

namespace {

const char* const kHistoryUsage =
    "usage: oddsfeed history FILE --id EVENT [--market M] [--line L] [--outcome O]\n"
    "         [--from MS] [--to MS] [--interval raw|1s|10s|1m|5m|15m|1h] [--format json|csv]\n"
    "         [--retain-ended DURATION]\n";

int usage(const std::string& msg) {
  std::fprintf(stderr, "oddsfeed: history: %s\n%s", msg.c_str(), kHistoryUsage);
  return 2;
}

struct HistoryArgs {
  std::string file, id;
  history::HistoryQuery q;
};

// A whole decimal integer in [lo, hi], as the server reads its parameters.
bool whole(const char* v, int64_t lo, int64_t hi, int64_t& out) {
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(v, &end, 10);
  if (*v == '\0' || *end != '\0' || errno == ERANGE || n < lo || n > hi) return false;
  out = n;
  return true;
}

// One option and its value; false when it is unknown or its value bad.
bool take(HistoryArgs& a, const std::string& opt, const char* v) {
  int64_t n = 0;
  if (opt == "--id") return a.id = v, !a.id.empty();
  if (opt == "--line") return a.q.line = v, true;
  if (opt == "--market" || opt == "--outcome") {
    if (!whole(v, 1, UINT32_MAX, n)) return false;
    (opt == "--market" ? a.q.market : a.q.outcome) = static_cast<uint32_t>(n);
    return true;
  }
  if (opt == "--from" || opt == "--to") {
    if (!whole(v, INT64_MIN, INT64_MAX, n)) return false;
    (opt == "--from" ? a.q.from : a.q.to) = n;
    return true;
  }
  if (opt == "--interval") {
    auto ms = history::interval_ms(v);
    if (!ms) return false;
    a.q.interval = v;
    a.q.interval_ms = *ms;
    return true;
  }
  if (opt == "--format") {
    a.q.csv = std::string(v) == "csv";
    return a.q.csv || std::string(v) == "json";
  }
  return false;
}

// -1 to go on, else the exit status.
int parse(int argc, char** argv, HistoryArgs& a) {
  for (int i = 0; i < argc; ++i) {
    const std::string opt = argv[i];
    if (opt.rfind("--", 0) != 0) {
      if (!a.file.empty()) return usage("one FILE only ('" + opt + "')");
      a.file = opt;
      continue;
    }
    if (i + 1 >= argc) return usage(opt + " needs a value");
    if (!take(a, opt, argv[++i])) return usage("bad or unknown option " + opt + " " + argv[i]);
  }
  if (a.file.empty()) return usage("FILE is required");
  if (a.id.empty()) return usage("--id is required");
  if (a.q.from && a.q.to && *a.q.from > *a.q.to) return usage("--from is after --to");
  return -1;
}

// Applies the capture as the server's replay does: the records pushed into
// a pipeline whose sink is a history recorder with no memory bound.
bool replay(const std::string& file, Engine& engine, history::HistoryStore& store) {
  FeedFileReader reader;
  std::string err;
  if (!reader.open(file, err)) return std::fprintf(stderr, "oddsfeed: %s\n", err.c_str()), false;
  history::HistoryRecorder recorder(store);
  Pipeline pipeline(engine);
  pipeline.add_sink(&recorder);
  recorder.start();
  pipeline.start();
  ReadAhead ahead(reader);
  std::vector<feed::Record> chunk;
  uint64_t n = 0;
  RecordProgress progress;
  while (ahead.next(chunk))
    for (auto& r : chunk) {
      pipeline.push(std::move(r));
      progress.at(++n);
    }
  ahead.finish();
  pipeline.stop();
  recorder.stop();
  if (!reader.fatal().empty()) return std::fprintf(stderr, "oddsfeed: %s\n", reader.fatal().c_str()), false;
  return true;
}

}  // namespace

int history_command(int argc, char** argv, int64_t retain_ended_ms) {
  HistoryArgs a;
  if (int rc = parse(argc, argv, a); rc >= 0) return rc;
  const ParsedId pid = parse_event_id(a.id);
  Engine engine;
  engine.set_retain_ended_ms(retain_ended_ms);
  history::HistoryStore store(SIZE_MAX);
  if (!replay(a.file, engine, store)) return 1;
  const EventEntry* e = pid.ok() ? engine.current()->events.find(pid.number) : nullptr;
  int rc = 0;
  store.read(pid.number, [&](const history::EventHistory* h, const history::HeldState& st) {
    if (!pid.ok() || (!h && !e)) {
      std::fprintf(stderr, "oddsfeed: %s: %s in %s\n", api::err::kEventNotFound, a.id.c_str(), a.file.c_str());
      rc = 1;
      return;
    }
    const std::string body = a.q.csv ? history::history_csv(a.q, h) : api::success_body([&](json::Writer& w) {
      history::write_history_json(w, a.q, e ? e->key : h->key(), h, st);
    });
    std::fwrite(body.data(), 1, body.size(), stdout);
  });
  return rc;
}

}  // namespace oddsrelay
