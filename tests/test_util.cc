#include "tests/test_util.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/core/state_digest.h"
#include "engine/sources/simulator.h"
#include "engine/storage/feed_file.h"
#include "protocol/event_json.h"
#include "protocol/feed_reader.h"

namespace oddsrelay::test {

feed::Record rec(const std::string& line) {
  static thread_local feed::FeedParser parser;
  feed::Record r;
  feed::LineStatus st = parser.parse(line, r);
  EXPECT_EQ(st, feed::LineStatus::Record) << line << " -> " << parser.error();
  return r;
}

feed::Record market(int64_t at, const std::string& id, uint32_t market, const std::vector<L>& lines) {
  std::string s = "{\"at\":" + std::to_string(at) + ",\"op\":\"market\",\"id\":\"" + id +
                  "\",\"market\":" + std::to_string(market) + ",\"lines\":{";
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) s += ",";
    s += "\"" + lines[i].key + "\":{\"s\":" + std::to_string(lines[i].s) + ",\"o\":{";
    for (size_t j = 0; j < lines[i].o.size(); ++j) {
      if (j) s += ",";
      auto [oid, price, flags] = lines[i].o[j];
      s += "\"" + std::to_string(oid) + "\":[" + std::to_string(price) + "," + std::to_string(flags) + "]";
    }
    s += "}}";
  }
  return rec(s + "}}");
}

feed::Record event(int64_t at, const std::string& id, int sport, bool live) {
  return rec("{\"at\":" + std::to_string(at) + ",\"op\":\"event\",\"id\":\"" + id +
             "\",\"event\":{\"c\":[1,\"England\"," + std::to_string(sport) +
             ",\"GB\"],\"t\":[10,\"Premier League\",1],\"g\":1,\"ts\":1767225600,\"h\":\"Home\",\"a\":\"Away\","
             "\"co\":1,\"map\":{},\"s\":0,\"live\":" +
             (live ? "true" : "false") + ",\"sport\":" + std::to_string(sport) + "}}");
}

void apply_all(Engine& e, std::vector<feed::Record> recs) {
  for (auto& r : recs) e.apply(std::move(r));
  e.commit();
}

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "oddsrelay-test-XXXXXX").string();
  path_ = mkdtemp(tmpl.data());
}

TempDir::~TempDir() { std::filesystem::remove_all(path_); }

long voluntary_switches(const std::string& thread_name) {
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::string comm;
    std::getline(std::ifstream(task.path() / "comm"), comm);
    if (comm != thread_name) continue;
    std::ifstream status(task.path() / "status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0) return std::stol(line.substr(line.find(':') + 1));
  }
  return -1;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << data;
}

std::string first_diff(const std::string& a, const std::string& b) {
  if (a == b) return "";
  std::istringstream sa(a), sb(b);
  std::string la, lb;
  for (size_t n = 1;; ++n) {
    bool ha = static_cast<bool>(std::getline(sa, la)), hb = static_cast<bool>(std::getline(sb, lb));
    if (!ha) la = "<end>";
    if (!hb) lb = "<end>";
    if (la != lb || (!ha && !hb)) return "line " + std::to_string(n) + ": " + la + " | " + lb;
  }
}

namespace {

struct OddsSums {
  uint64_t markets = 0, lines = 0, suspended = 0, outcomes = 0, locked = 0;
  int64_t price = 0, prev_price = 0, ts = 0, ls = 0;
  void add(const MarketList& ms) {
    for (const MarketRef& m : ms) {
      ++markets;
      for (const Line& l : m->lines) {
        ++lines;
        suspended += l.suspended;
        ls += l.ls;
      }
      for (const Outcome& o : m->outcomes) {
        ++outcomes;
        locked += o.flags != 0;
        price += o.price;
        prev_price += o.prev_price;
        ts += o.ts;
      }
    }
  }
  std::string str() const {
    return "markets=" + std::to_string(markets) + " lines=" + std::to_string(lines) +
           " suspended=" + std::to_string(suspended) + " outcomes=" + std::to_string(outcomes) +
           " locked=" + std::to_string(locked) + " price_sum=" + std::to_string(price) +
           " prev_price_sum=" + std::to_string(prev_price) + " ts_sum=" + std::to_string(ts) +
           " ls_sum=" + std::to_string(ls);
  }
};

}  // namespace

std::string state_summary(const Snapshot& s) {
  uint64_t events = 0, listed = 0, live = 0, key_bytes = 0, info_bytes = 0;
  int64_t updated_sum = 0;
  OddsSums odds, at_end;
  uint64_t scores = 0, ended = 0, final_versions = 0, timeline = 0, stats = 0, stats_final = 0;
  int64_t score_ts = 0, final_at = 0, goals = 0, final_goals = 0, stat_sum = 0, stats_ts = 0;
  s.events.for_each([&](const EventEntry& e) {
    ++events;
    listed += e.listed();
    live += e.live();
    key_bytes += e.key.size();
    info_bytes += e.info ? e.info->json.size() : 0;
    updated_sum += e.updated_at;
    odds.add(e.markets);
    if (const ScoreState* sc = e.score.get()) {
      ++scores;
      score_ts += sc->ts;
      goals += sc->last.home.value_or(0) + sc->last.away.value_or(0);
      ended += sc->ended;
      final_versions += sc->final_version;
      final_at += sc->final_at;
      if (sc->final_score) final_goals += sc->final_score->first + sc->final_score->second;
      timeline += sc->timeline.size();
      at_end.add(sc->odds_at_end);
    }
    if (const StatsState* st = e.stats.get()) {
      ++stats;
      stats_final += st->final;
      stats_ts += st->ts;
      for (const auto& v : st->values)
        if (v) stat_sum += v->first + v->second;
    }
  });
  return "clock=" + std::to_string(s.clock) + " last_live_at=" + std::to_string(s.last_live_at) +
         " listed_live=" + std::to_string(s.listed_live) + " listed_prematch=" + std::to_string(s.listed_prematch) +
         " counted_markets=" + std::to_string(s.markets) + " counted_outcomes=" + std::to_string(s.outcomes) +
         " sports=" + std::to_string(s.sports.size()) + "\nevents=" + std::to_string(events) +
         " listed=" + std::to_string(listed) + " live=" + std::to_string(live) +
         " key_bytes=" + std::to_string(key_bytes) + " info_bytes=" + std::to_string(info_bytes) +
         " updated_sum=" + std::to_string(updated_sum) + "\nodds " + odds.str() + "\nscores=" + std::to_string(scores) +
         " score_ts_sum=" + std::to_string(score_ts) + " goals=" + std::to_string(goals) +
         " ended=" + std::to_string(ended) + " final_versions=" + std::to_string(final_versions) +
         " final_at_sum=" + std::to_string(final_at) + " final_goals=" + std::to_string(final_goals) +
         " timeline_points=" + std::to_string(timeline) + "\nodds_at_end " + at_end.str() +
         "\nstats=" + std::to_string(stats) + " final=" + std::to_string(stats_final) +
         " ts_sum=" + std::to_string(stats_ts) + " values_sum=" + std::to_string(stat_sum) + "\n";
}

}  // namespace oddsrelay::test

namespace oddsrelay::test {

::testing::AssertionResult same_state(const Snapshot& a, const Snapshot& b) {
  std::string d = first_diff(dump_state(a), dump_state(b));
  std::string sa = state_summary(a), sb = state_summary(b);
  if (state_digest(a) != state_digest(b)) return ::testing::AssertionFailure() << "digests differ; dump " << d;
  if (!d.empty()) return ::testing::AssertionFailure() << "dumps differ at " << d;
  if (sa != sb) return ::testing::AssertionFailure() << "summaries differ:\n" << sa << "vs\n" << sb;
  return ::testing::AssertionSuccess();
}

std::vector<feed::Record> sim_records(size_t n, uint64_t seed, uint32_t events, int64_t minute_ms) {
  sim::Simulator sim(sim::SimOptions{seed, events, 1000, minute_ms});
  std::vector<feed::Record> out;
  sim.open(1'000'000, 1'000'000, out);
  while (out.size() < n) sim.step(sim.now(), out);
  out.resize(n);
  return out;
}

std::string exchange(uint16_t port, const std::string& requests) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  EXPECT_EQ(::send(fd, requests.data(), requests.size(), 0), static_cast<ssize_t>(requests.size()));
  std::string got;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) got.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return got;
}

SnapshotPtr replay_file(const std::string& path, size_t limit, size_t* records) {
  FeedFileReader r;
  std::string err;
  EXPECT_TRUE(r.open(path, err)) << err;
  Engine e;
  feed::Record rec;
  size_t n = 0;
  while (n < limit && r.next(rec)) {
    e.apply(std::move(rec));
    rec = feed::Record{};
    if (++n % 256 == 0) e.commit();
  }
  e.commit();
  EXPECT_EQ(r.stats().malformed, 0u) << path;
  EXPECT_EQ(r.fatal(), "") << path;
  if (records) *records = n;
  return e.current();
}

}  // namespace oddsrelay::test
