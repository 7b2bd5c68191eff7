// oddsrelay::client without a server (clients/cpp): the digest's terms
// against known XXH64 values and the worked example of docs/api.md, the
// apply of every frame kind (events, markets, null removals, empty rungs)
// with the digest kept equal to a sum from scratch, each state transition
// and resync reason of the stream machine through scripted frames, the
// backoff's bounds, and the CLI's lines and --out file.
#include "clients/cpp/client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <rapidjson/document.h>
#include <sys/socket.h>
#include <unistd.h>
#include <xxhash.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "clients/cpp/backoff.h"
#include "clients/cpp/frame_ops.h"
#include "clients/cpp/json_text.h"
#include "clients/cpp/replica.h"
#include "clients/cpp/stream_machine.h"
#include "clients/cpp/ws_connection.h"
#include "protocol/digest_terms.h"
#include "protocol/ws_frame.h"

// Heap allocations, counted while g_counting is set (ClientMachine's
// allocation test): the apply path promises none per outcome.
namespace {
std::atomic<bool> g_counting{false};
std::atomic<uint64_t> g_allocations{0};
}  // namespace
void* operator new(size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace oddsrelay::client {
namespace {

constexpr char kSep = '\x1f';
const std::string kEv = "s7-101.10000001";
const std::string kM1001 = R"({"s":{"2001":[185,0,null,5],"2002":[340,0,null,5],"ls":5,"s":0},"s0.5":{"ls":5}})";

std::string frame(const std::string& type, const std::string& channel, const std::string& body) {
  return type + kSep + channel + kSep + body;
}

uint64_t xxh(const std::string& s) { return XXH64(s.data(), s.size(), 0); }

// The documented sum from nothing, through a DOM and string concatenation
// (not the client's SAX path): e| per listed event, every outcome held.
uint64_t scratch_digest(const ReplicaState& st) {
  uint64_t total = 0;
  for (const auto& [id, e] : st.events()) total += xxh("e|" + std::to_string(e.number));
  for (const auto& [number, book] : st.odds())
    for (const auto& [mid, m] : book) {
      rapidjson::Document d;
      d.Parse(m.json.c_str());
      for (const auto& line : d.GetObject()) {
        const auto& l = line.value;
        const std::string s = l.HasMember("s") ? std::to_string(l["s"].GetInt()) : "0";
        for (const auto& o : l.GetObject()) {
          const std::string oid = o.name.GetString();
          if (oid == "s" || oid == "ls") continue;
          total += xxh(std::to_string(number) + "|" + mid + "|" + line.name.GetString() + "|" + oid + "|" +
                       std::to_string(o.value[0].GetInt()) + "|" + std::to_string(o.value[1].GetInt()) + "|" + s);
        }
      }
    }
  return total;
}

bool apply(ReplicaState& st, const std::string& channel, const std::string& body) {
  FrameParser p;
  std::vector<FrameOp> ops;
  if (!p.parse(channel, body, ops)) return false;
  for (const auto& op : ops) st.apply(op);
  return true;
}

TEST(ClientDigest, KnownTermsAndTheWorkedExample) {
  EXPECT_EQ(xxh("10000001|1001|s|2001|185|0|0"), 0x54dd77cc753b9da7ull);  // docs/api.md "State digest"
  EXPECT_EQ(xxh("10000001|1001|s|2002|340|0|0"), 0x73e88ee5258a63c5ull);
  EXPECT_EQ(outcome_term(10000001, 1001, "s", 2001, 185, 0, 0), 0x54dd77cc753b9da7ull);
  EXPECT_EQ(event_term(10000001), 0xf72ec34100af67e1ull);
  TermText t;
  t.add("10000001").add("1001").add("s").add("2002").add("340").add("0").add("0");
  EXPECT_EQ(t.text(), "10000001|1001|s|2002|340|0|0");
  EXPECT_EQ(t.hash(), 0x73e88ee5258a63c5ull);
  EXPECT_EQ(digest_hex(0x54dd77cc753b9da7ull + 0x73e88ee5258a63c5ull), "c8c606b19ac6016c");

  ReplicaState st;
  ASSERT_TRUE(apply(st, "evt:1", "{\"" + kEv + R"(":{"live":true,"sport":1}})"));
  ASSERT_TRUE(apply(st, "odds:1:10000001", R"({"1001":)" + kM1001 + "}"));
  EXPECT_EQ(digest_hex(st.digest()), "bff4c9f29b75694d");
  EXPECT_EQ(digest_hex(st.odds_digest()), "c8c606b19ac6016c");
}

TEST(ClientDigest, TheSumWrapsModulo2To64) {
  ReplicaState st;
  // Enough outcomes that the sum passes 2^64 many times over.
  std::string m = R"({"s":{)";
  for (int i = 0; i < 64; ++i) m += "\"" + std::to_string(2000 + i) + "\":[" + std::to_string(100 + i) + ",0],";
  m += R"("s":1}})";
  ASSERT_TRUE(apply(st, "odds:1:5", R"({"1001":)" + m + "}"));
  EXPECT_EQ(st.odds_digest(), scratch_digest(st));
}

TEST(ClientApply, EveryFrameKindKeepsTheDigestEqualToAFreshSum) {
  ReplicaState st;
  const std::vector<std::pair<std::string, std::string>> steps = {
      {"evt:1", "{\"" + kEv + R"(":{"live":true,"sport":1},"s7-101.5":{"live":false,"sport":1}})"},
      {"odds:1:10000001", R"({"1001":)" + kM1001 + R"(,"1007":{"s2.5":{"2005":[190,1,"2.5",5],"ls":5,"s":1}}})"},
      {"odds:1:10000001", R"({"1001":{"s":{"2001":[190,0,null,6],"ls":6,"s":0}}})"},  // a market replaced
      {"odds:1:10000001", R"({"1007":null})"},                                        // a market removed
      {"evt:1", "{\"" + kEv + R"(":{"live":true,"sport":1,"h":"changed"}})"},         // an event changed
      {"evt:1", R"({"s7-101.5":null})"},                                              // an event removed
      {"odds:1:10000001", R"({"1004":{"s0.5":{"ls":7}}})"},  // only an empty rung: adds nothing
  };
  for (const auto& [ch, body] : steps) {
    ASSERT_TRUE(apply(st, ch, body)) << body;
    EXPECT_EQ(st.digest(), scratch_digest(st)) << body;
  }
  ASSERT_EQ(st.odds().at(10000001).size(), 2u);
  EXPECT_EQ(st.odds().at(10000001).at("1001").json, R"({"s":{"2001":[190,0,null,6],"ls":6,"s":0}})");
  EXPECT_EQ(st.odds().at(10000001).at("1004").sum, 0u);
  const OddsData data = st.data();
  ASSERT_EQ(data.size(), 1u);
  EXPECT_EQ(data.at(kEv).size(), 2u);
  // An event leaving the lists takes its odds with it.
  ASSERT_TRUE(apply(st, "evt:1", "{\"" + kEv + "\":null}"));
  EXPECT_TRUE(st.events().empty());
  EXPECT_TRUE(st.odds().empty());
  EXPECT_EQ(st.digest(), 0u);
}

TEST(ClientApply, AnEventThatIsNotLiveAnyMoreDropsItsOdds) {
  ReplicaState st;
  ASSERT_TRUE(apply(st, "evt:1", "{\"" + kEv + R"(":{"live":true}})"));
  ASSERT_TRUE(apply(st, "odds:1:10000001", R"({"1001":)" + kM1001 + "}"));
  ASSERT_TRUE(apply(st, "evt:1", "{\"" + kEv + R"(":{"live":false}})"));
  EXPECT_TRUE(st.odds().empty());
  EXPECT_EQ(st.digest(), event_term(10000001));
  EXPECT_EQ(st.data().count(kEv), 0u);  // listed, not live, no odds
}

TEST(ClientApply, OddsOfAnUnlistedEventAreKeyedByItsNumber) {
  ReplicaState st;
  ASSERT_TRUE(apply(st, "odds:1:42", R"({"1001":)" + kM1001 + "}"));
  const OddsData data = st.data();
  ASSERT_EQ(data.count("42"), 1u);
  EXPECT_EQ(data.at("42").at("1001"), kM1001);
}

TEST(ClientApply, FramesThatCannotBeAppliedAreBadAndLeaveNoOperation) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"nope:1", "{}"},
      {"odds:1", "{}"},
      {"odds:1:x", "{}"},
      {"evt:1", "[]"},
      {"evt:1", "null"},
      {"odds:1:5", R"({"1001":3})"},
      {"odds:1:5", R"({"1001":{"s":{"2001":5,"s":0}}})"},    // an outcome that is not a tuple
      {"odds:1:5", R"({"1001":{"s":{"2001":[5],"s":0}}})"},  // a tuple without flags
      {"odds:1:5", R"({"1001":{"s":{"2001":["5",0],"s":0}}})"},
      {"odds:1:5", R"({"1001":{"s":[1]}})"},            // a line that is not an object
      {"odds:1:5", R"({"1001":{"s":{"2001":[5,0]}})"},  // cut short
      {"odds:1:5", R"({"1001":{"s":{"2001":[5,0]}}} x)"},
      {"evt:1", R"({"x.y":{}})"},
  };
  for (const auto& [ch, body] : bad) {
    FrameParser p;
    std::vector<FrameOp> ops(1);
    EXPECT_FALSE(p.parse(ch, body, ops)) << ch << " " << body;
    EXPECT_EQ(ops.size(), 1u) << body;
  }
}

TEST(ClientApply, EventNumbers) {
  uint64_t n = 0;
  EXPECT_TRUE(event_number("s7-101.10000001", n));
  EXPECT_EQ(n, 10000001u);
  EXPECT_TRUE(event_number("7-42", n));
  EXPECT_EQ(n, 42u);
  EXPECT_FALSE(event_number("x.", n));
  EXPECT_FALSE(event_number("a.b", n));
}

// The machine driven by scripted frames; every callback recorded.
struct Scripted {
  std::vector<std::string> lines;
  std::vector<Group> groups;
  StreamMachine m{StreamMachine::Callbacks{[this](const Event& e) { lines.push_back(event_json(e)); },
                                           [this](const Group& g) { groups.push_back(g); }}};

  StreamMachine::Next feed(const std::string& f) { return m.on_message(f); }
  void connect() {
    m.begin_connect();
    m.connected();
  }
};

std::string ready(uint64_t seq, const std::string& extra = "") {
  return frame("INFO", "PUB",
               R"({"ready":true,"protocol":"v2","epoch":"E","seq":)" + std::to_string(seq) + extra + "}");
}
std::string info(uint64_t from, uint64_t seq, const std::string& digest = "") {
  std::string b = "{\"seq\":" + std::to_string(seq) + ",\"from\":" + std::to_string(from) + ",\"at\":1";
  if (!digest.empty()) b += ",\"digest\":\"" + digest + "\"";
  return frame("INFO", "PUB", b + "}");
}
const std::string kEvtFrame = frame("P", "evt:1", "{\"" + kEv + R"(":{"live":true,"sport":1}})");
const std::string kOddsFrame = frame("P", "odds:1:10000001", R"({"1001":)" + kM1001 + "}");

TEST(ClientMachine, ConnectingSyncingLiveAndAViewOnlyAtAnInfo) {
  Scripted s;
  s.connect();
  EXPECT_EQ(s.m.resume_query(), "");  // nothing to resume yet
  EXPECT_EQ(s.feed(ready(10)), StreamMachine::Next::kContinue);
  EXPECT_EQ(s.m.state(), State::kSyncing);
  s.feed(kEvtFrame);
  s.feed(kOddsFrame);
  // Half a snapshot is never handed out.
  EXPECT_TRUE(s.m.view().data.empty());
  EXPECT_FALSE(s.m.view().seq);
  EXPECT_EQ(s.feed(info(11, 12, "bff4c9f29b75694d")), StreamMachine::Next::kContinue);
  const View v = s.m.view();
  EXPECT_EQ(v.state, State::kLive);
  EXPECT_EQ(v.seq, 12u);
  EXPECT_TRUE(v.verified);
  EXPECT_EQ(v.data.at(kEv).at("1001"), kM1001);
  EXPECT_EQ(s.lines, (std::vector<std::string>{R"({"state":"syncing","epoch":"E","seq":null,"verified":false})",
                                               R"({"state":"live","epoch":"E","seq":12,"verified":true})"}));
  ASSERT_EQ(s.groups.size(), 1u);
  EXPECT_EQ(s.groups[0].events, std::vector<std::string>{kEv});
  EXPECT_EQ(s.groups[0].markets.size(), 1u);
  EXPECT_TRUE(s.groups[0].verified);
  EXPECT_EQ(s.m.resume_query(), "&resume=E:12");
}

// A ready INFO that counts its snapshot's frames: the snapshot is applied
// (and checked) as its last frame arrives, with no INFO after it, and an
// empty one at once: a feed standing still leaves no client syncing.
TEST(ClientMachine, ACountedSnapshotIsLiveAtItsLastFrameAndAnEmptyOneAtOnce) {
  Scripted s;
  s.connect();
  s.feed(ready(12, R"(,"frames":2,"digest":"bff4c9f29b75694d")"));
  s.feed(kEvtFrame);
  EXPECT_EQ(s.m.state(), State::kSyncing);  // one of two
  EXPECT_EQ(s.feed(kOddsFrame), StreamMachine::Next::kContinue);
  View v = s.m.view();
  EXPECT_EQ(v.state, State::kLive);
  EXPECT_EQ(v.seq, 12u);
  EXPECT_TRUE(v.verified);
  EXPECT_EQ(v.data.at(kEv).at("1001"), kM1001);
  EXPECT_EQ(s.feed(info(13, 14)), StreamMachine::Next::kContinue);  // live groups follow the ready seq
  EXPECT_EQ(s.m.view().seq, 14u);

  Scripted empty;
  empty.connect();
  empty.feed(ready(30, R"(,"frames":0,"digest":"0000000000000000")"));
  v = empty.m.view();
  EXPECT_EQ(v.state, State::kLive);
  EXPECT_EQ(v.seq, 30u);
  EXPECT_TRUE(v.verified);

  Scripted wrong;  // the count closes the snapshot: a digest it does not match is a resync
  wrong.connect();
  wrong.feed(ready(12, R"(,"frames":2,"digest":"0000000000000001")"));
  wrong.feed(kEvtFrame);
  EXPECT_EQ(wrong.feed(kOddsFrame), StreamMachine::Next::kDrop);
  EXPECT_EQ(wrong.m.state(), State::kResyncing);
}

// A replica at seq 12 (the worked example), live.
void synced(Scripted& s) {
  s.connect();
  s.feed(ready(10));
  s.feed(kEvtFrame);
  s.feed(kOddsFrame);
  ASSERT_EQ(s.feed(info(11, 12, "bff4c9f29b75694d")), StreamMachine::Next::kContinue);
  s.lines.clear();
}

TEST(ClientMachine, ACutResumesWithoutASnapshotAndKeepsTheReplica) {
  Scripted s;
  synced(s);
  s.m.on_cut(false);
  EXPECT_EQ(s.m.state(), State::kConnecting);
  EXPECT_EQ(s.m.view().data.size(), 1u);         // kept across the cut
  EXPECT_EQ(s.m.begin_connect(), std::nullopt);  // the first retry does not wait
  EXPECT_EQ(s.m.resume_query(), "&resume=E:12");
  s.m.connected();
  s.feed(ready(20, R"(,"resumed":true)"));
  EXPECT_EQ(s.m.state(), State::kLive);
  s.feed(frame("P", "odds:1:10000001", R"({"1001":null})"));
  EXPECT_EQ(s.feed(info(13, 13, digest_hex(event_term(10000001)))), StreamMachine::Next::kContinue);
  EXPECT_EQ(s.m.view().seq, 13u);
  EXPECT_EQ(s.m.resyncs(), 0u);
  EXPECT_EQ(s.lines, (std::vector<std::string>{R"({"state":"connecting","epoch":"E","seq":12,"verified":true})",
                                               R"({"state":"live","epoch":"E","seq":12,"verified":true})"}));
}

TEST(ClientMachine, EachResyncReasonThrowsTheReplicaAwayAndAsksForASnapshot) {
  struct Case {
    const char* reason;
    std::vector<std::string> frames;
    bool resumed_refused = false;
  };
  const std::vector<Case> cases = {
      {"gap", {info(14, 15)}},
      {"bad_frame", {"no separators"}},
      {"bad_frame", {frame("P", "odds:1:10000001", "{not json"), info(13, 13)}},
      {"bad_frame", {frame("INFO", "PUB", R"({"seq":13})")}},
      {"digest_mismatch", {frame("P", "odds:1:10000001", R"({"1001":null})"), info(13, 13, "0000000000000001")}},
  };
  for (const Case& c : cases) {
    Scripted s;
    synced(s);
    StreamMachine::Next last = StreamMachine::Next::kContinue;
    for (const auto& f : c.frames) last = s.feed(f);
    EXPECT_EQ(last, StreamMachine::Next::kDrop) << c.reason;
    EXPECT_EQ(s.m.state(), State::kResyncing) << c.reason;
    ASSERT_FALSE(s.lines.empty());
    EXPECT_EQ(s.lines[0], std::string(R"({"resync":")") + c.reason +
                              "\",\"seq\":" + (std::string(c.reason) == "digest_mismatch" ? "13" : "12") + "}");
    EXPECT_EQ(s.m.resume_query(), "") << c.reason;  // a snapshot, not a resume
    // The next connection's snapshot replaces the replica whole.
    s.connect();
    EXPECT_EQ(s.m.state(), State::kResyncing);
    s.feed(ready(30));
    EXPECT_EQ(s.m.state(), State::kSyncing);
    s.feed(kEvtFrame);
    EXPECT_EQ(s.feed(info(31, 31, digest_hex(event_term(10000001)))), StreamMachine::Next::kContinue);
    EXPECT_EQ(s.m.state(), State::kLive);
    EXPECT_TRUE(s.m.view().data.at(kEv).empty()) << c.reason;
    ASSERT_FALSE(s.groups.empty());
    EXPECT_EQ(s.groups.back().resync, c.reason);
  }
}

TEST(ClientMachine, ARefusedResumeIsAResyncAndTheSnapshotFollows) {
  Scripted s;
  synced(s);
  s.m.on_cut(false);
  s.m.begin_connect();
  EXPECT_EQ(s.m.resume_query(), "&resume=E:12");
  s.m.connected();
  EXPECT_EQ(s.feed(ready(50, R"(,"resumed":false,"reason":"too_old")")), StreamMachine::Next::kContinue);
  EXPECT_EQ(s.m.state(), State::kSyncing);
  EXPECT_EQ(s.lines[1], R"({"resync":"resume_refused:too_old","seq":12})");
  EXPECT_EQ(s.lines[2], R"({"state":"resyncing","epoch":"E","seq":12,"verified":false})");
  s.feed(kEvtFrame);
  s.feed(info(51, 51));
  EXPECT_EQ(s.m.view().seq, 51u);
  EXPECT_EQ(s.groups.back().resync, "resume_refused:too_old");
}

TEST(ClientMachine, StaleThenResumedAndAnErrorReadyIsACut) {
  Scripted s;
  synced(s);
  s.m.on_stale();
  EXPECT_EQ(s.m.state(), State::kStale);
  EXPECT_EQ(s.lines.back(), R"({"state":"stale","epoch":"E","seq":12,"verified":true})");
  s.m.begin_connect();
  EXPECT_EQ(s.m.state(), State::kStale);  // stays stale until the stream is back
  EXPECT_EQ(s.m.resume_query(), "&resume=E:12");
  s.m.connected();
  EXPECT_EQ(s.feed(frame("INFO", "PUB", R"({"error":"too many streams"})")), StreamMachine::Next::kDrop);
  EXPECT_EQ(s.m.resyncs(), 0u);
  s.m.on_cut(false);
  s.m.begin_connect();
  s.m.connected();
  s.feed(ready(20, R"(,"resumed":true)"));
  EXPECT_EQ(s.m.state(), State::kLive);
}

TEST(ClientMachine, AGroupReplacingKnownMarketsAllocatesNothing) {
  // Once warm, a delta group (frames held, parsed, applied, the digest
  // checked) allocates nothing, however many outcomes it carries.
  StreamMachine m({});
  m.connected();
  m.on_message(ready(10));
  m.on_message(kEvtFrame);
  m.on_message(kOddsFrame);
  ASSERT_EQ(m.on_message(info(11, 11)), StreamMachine::Next::kContinue);
  std::string market = R"({"1001":{"s":{)";
  for (int i = 0; i < 50; ++i)
    market += "\"" + std::to_string(2000 + i) + "\":[" + std::to_string(150 + i) + ",0,null,9],";
  market += R"("ls":9,"s":0}}})";
  const std::string odds = frame("P", "odds:1:10000001", market);
  uint64_t seq = 11;
  auto group = [&] {
    m.on_message(odds);
    return m.on_message(info(seq + 1, seq + 1));
  };
  std::vector<std::string> infos;
  for (int i = 0; i < 200; ++i) infos.push_back(info(seq + 1 + i, seq + 1 + i));
  for (int i = 0; i < 100; ++i, ++seq) ASSERT_EQ(group(), StreamMachine::Next::kContinue);  // warm
  g_allocations = 0;
  g_counting = true;
  for (int i = 0; i < 100; ++i, ++seq) {
    m.on_message(odds);
    m.on_message(infos[static_cast<size_t>(seq - 11)]);
  }
  g_counting = false;
  EXPECT_EQ(g_allocations.load(), 0u);
  EXPECT_EQ(m.seq(), seq);
  EXPECT_EQ(m.resyncs(), 0u);
}

TEST(ClientMachine, BackoffAttemptsCountUntilAReadyInfo) {
  Scripted s;
  EXPECT_EQ(s.m.begin_connect(), std::nullopt);
  EXPECT_EQ(s.m.begin_connect(), 0u);
  EXPECT_EQ(s.m.begin_connect(), 1u);
  EXPECT_EQ(s.m.begin_connect(), 2u);
  s.m.connected();
  s.feed(ready(1));
  EXPECT_EQ(s.m.begin_connect(), std::nullopt);
}

TEST(ClientBackoff, FullJitterWithinBounds) {
  EXPECT_DOUBLE_EQ(backoff_ceiling(0), 0.5);
  EXPECT_DOUBLE_EQ(backoff_ceiling(1), 1.0);
  EXPECT_DOUBLE_EQ(backoff_ceiling(5), 16.0);
  EXPECT_DOUBLE_EQ(backoff_ceiling(6), 30.0);
  EXPECT_DOUBLE_EQ(backoff_ceiling(1000), 30.0);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  for (unsigned attempt = 0; attempt < 12; ++attempt) {
    double lo = 1e9, hi = 0;
    for (int i = 0; i < 2000; ++i) {
      const double d = backoff_delay(attempt, u(rng));
      ASSERT_GE(d, 0.0);
      ASSERT_LE(d, backoff_ceiling(attempt));
      lo = std::min(lo, d), hi = std::max(hi, d);
    }
    // Jittered over the whole range, not a fixed delay.
    EXPECT_LT(lo, 0.05 * backoff_ceiling(attempt));
    EXPECT_GT(hi, 0.95 * backoff_ceiling(attempt));
  }
}

TEST(ClientCli, StreamTargetAndOutFile) {
  Options o;
  o.key = "k 1";
  o.events = "s7-101.1,s7-101.2";
  o.conflate_ms = 250;
  o.verify = true;
  EXPECT_EQ(stream_target(o), "/pt-ws?api_key=k+1&protocol=v2&events=s7-101.1,s7-101.2&conflate_ms=250&verify=1");
  View v;
  v.epoch = "E";
  v.seq = 12;
  v.odds_digest = 0xc8c606b19ac6016cull;
  v.data[kEv]["1001"] = kM1001;
  v.data["s7-101.5"];
  std::string out;
  ASSERT_TRUE(out_json(v, out));
  EXPECT_EQ(out,
            R"({"data": {"s7-101.10000001": {"1001": {"s": {"2001": [185, 0, null, 5], "2002": [340, 0, null, 5], )"
            R"("ls": 5, "s": 0}, "s0.5": {"ls": 5}}}, "s7-101.5": {}}, "digest": "c8c606b19ac6016c", "epoch": "E", )"
            R"("seq": 12})");
  std::string s;
  append_json_string(s, "a\"\\\n\xc3\xa9");
  EXPECT_EQ(s, R"("a\"\\\n\u00e9")");
}

TEST(ClientApi, TheDocumentedUseAgainstNoServerRetriesAndStopsPromptly) {
  // docs/clients.md's example, against a port nothing listens on: the
  // client keeps connecting (backing off), hands out an empty view, and
  // stop() ends it at once.
  std::vector<Event> events;
  std::mutex mu;
  Options o;
  o.url = "http://127.0.0.1:1", o.key = "KEY", o.markets = "1001", o.verify = true;
  o.on_event = [&](const Event& e) {
    std::lock_guard lock(mu);
    events.push_back(e);
  };
  Client c(o);
  c.start();
  // A refused connect is quick, but a loaded machine may start the thread late.
  for (int i = 0; i < 250 && c.last_error().empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const View v = c.view();
  EXPECT_EQ(v.state, State::kConnecting);
  EXPECT_FALSE(v.seq);
  EXPECT_TRUE(v.data.empty());
  EXPECT_FALSE(c.last_error().empty());
  const auto t0 = std::chrono::steady_clock::now();
  c.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  std::lock_guard lock(mu);
  EXPECT_TRUE(events.empty());  // still connecting: no state change to report
}

// The handshake's answer is checked: a 101 whose Sec-WebSocket-Accept is not
// the one for this connection's key (a proxy's cached answer, something
// that is not a WebSocket server) is refused, not read as frames. A fake
// server on loopback answers once, rightly or wrongly.
std::string handshake_against(bool right_accept, std::string& key_seen) {
  const int ls = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  EXPECT_EQ(::bind(ls, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  EXPECT_EQ(::listen(ls, 1), 0);
  ::getsockname(ls, reinterpret_cast<sockaddr*>(&a), &len);
  std::thread server([&] {
    const int s = ::accept(ls, nullptr, nullptr);
    std::string req;
    char buf[2048];
    while (req.find("\r\n\r\n") == std::string::npos) {
      const ssize_t n = ::recv(s, buf, sizeof buf, 0);
      if (n <= 0) break;
      req.append(buf, static_cast<size_t>(n));
    }
    const size_t k = req.find("Sec-WebSocket-Key: ");
    key_seen = k == std::string::npos ? "" : req.substr(k + 19, req.find("\r\n", k) - k - 19);
    const std::string accept = ws::accept_key(right_accept ? key_seen : "dGhlIHNhbXBsZSBub25jZQ==");
    const std::string ans =
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "sec-websocket-accept:  " +
        accept + "\r\n\r\n";
    EXPECT_EQ(::send(s, ans.data(), ans.size(), MSG_NOSIGNAL), static_cast<ssize_t>(ans.size()));
    ::close(s);
  });
  WsConnection c;
  std::string error;
  const bool ok = c.open("127.0.0.1", ntohs(a.sin_port), "/pt-ws", false, std::chrono::seconds(10), error);
  server.join();
  ::close(ls);
  return ok ? "open" : error;
}

TEST(ClientHandshake, TheAcceptMustAnswerThisConnectionsKey) {
  std::string key1, key2;
  EXPECT_EQ(handshake_against(true, key1), "open");
  EXPECT_EQ(handshake_against(false, key2), "handshake: Sec-WebSocket-Accept does not answer the key");
  EXPECT_EQ(key1.size(), 24u);
  EXPECT_NE(key1, key2) << "a fresh key per connection";
  EXPECT_FALSE(ws::accept_key(key1).empty()) << "a valid key: 16 bytes in base64";
}

}  // namespace
}  // namespace oddsrelay::client
