// The reading half of a snapshot file (snapshot_file.h): every line's
// checksum checked, the header, then the `state` lines parsed back into the
// engine's entries with the feed parser (one codec for the journal and the
// snapshot) up to an `end` line that must match. Recovery loads a data dir's
// newest valid snapshot through this; an edge loads the bus's.
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>

#include "engine/core/odds_digest.h"
#include "engine/storage/fs_util.h"
#include "engine/storage/snapshot_file.h"
#include "protocol/feed_reader.h"
#include "protocol/feed_writer.h"
#include "protocol/json_in.h"

namespace oddsrelay {
namespace {

using Value = rapidjson::Value;

bool get_i64(const Value& v, int64_t& out) {
  if (!v.IsInt64()) return false;
  out = v.GetInt64();
  return true;
}

// `event`: the event whose served odds these are (their digest), 0 for
// markets that are not served.
bool read_markets(const Value& v, MarketList& out, std::string& err, uint64_t event = 0) {
  if (!v.IsArray()) return err = "markets: not an array", false;
  for (const Value& mv : v.GetArray()) {
    if (!mv.IsArray() || mv.Size() != 2 || !mv[0].IsUint() || !mv[1].IsArray()) return err = "bad market", false;
    const Value& lines = mv[1];
    size_t nout = 0;
    for (const Value& lv : lines.GetArray()) {
      if (!lv.IsArray() || lv.Size() != 4 || !lv[0].IsString() || !lv[1].IsUint() || !lv[2].IsInt64() ||
          !lv[3].IsArray())
        return err = "bad line", false;
      nout += lv[3].Size();
    }
    Line* ls;
    Outcome* os;
    auto m = Market::make(mv[0].GetUint(), lines.Size(), nout, &ls, &os);
    uint32_t next = 0;
    for (rapidjson::SizeType i = 0; i < lines.Size(); ++i) {
      const Value& lv = lines[i];
      ls[i].key = LineKey(std::string_view(lv[0].GetString(), lv[0].GetStringLength()));
      ls[i].suspended = static_cast<uint8_t>(lv[1].GetUint());
      ls[i].ls = lv[2].GetInt64();
      ls[i].first = next;
      ls[i].count = lv[3].Size();
      for (const Value& ov : lv[3].GetArray()) {
        if (!ov.IsArray() || ov.Size() != 5 || !ov[0].IsUint() || !ov[1].IsInt() || !ov[2].IsUint() || !ov[3].IsInt() ||
            !ov[4].IsInt64())
          return err = "bad outcome", false;
        os[next++] = Outcome{ov[0].GetUint(), ov[1].GetInt(), ov[2].GetUint(), ov[3].GetInt(), ov[4].GetInt64()};
      }
    }
    if (event) m->digest = market_digest(event, *m);
    if (!out.empty() && out.back().id >= m->id) return err = "markets out of order", false;
    out.push_back(MarketRef{m->id, std::move(m)});
  }
  return true;
}

// Parses a nested feed record with the feed parser.
bool read_nested(const Value& v, feed::FeedParser& parser, feed::Record& out, std::string& err) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  if (parser.parse(std::string_view(buf.GetString(), buf.GetSize()), out) != feed::LineStatus::Record)
    return err = "nested record: " + parser.error(), false;
  return true;
}

bool read_result(std::string_view name, feed::MatchResult& out) {
  for (auto r : {feed::MatchResult::None, feed::MatchResult::Completed, feed::MatchResult::Abandoned,
                 feed::MatchResult::Cancelled, feed::MatchResult::Expunged})
    if (name == feed::result_name(r)) {
      out = r;
      return true;
    }
  return false;
}

bool read_score(const Value& v, feed::FeedParser& parser, ScoreState& s, std::string& err) {
  if (!v.IsObject() || !v.HasMember("rec") || !v.HasMember("tl") || !v["tl"].IsArray()) return err = "bad score", false;
  feed::Record r;
  if (!read_nested(v["rec"], parser, r, err)) return false;
  if (r.op() != feed::Op::Score) return err = "score: not a score record", false;
  s.last = r.score();
  s.ts = r.at;
  for (const Value& p : v["tl"].GetArray()) {
    if (!p.IsArray() || p.Size() != 4 || !p[0].IsInt64() || !p[1].IsInt() || !p[2].IsInt() || !p[3].IsString())
      return err = "bad timeline point", false;
    s.timeline.push_back(ScorePoint{p[0].GetInt64(), p[1].GetInt(), p[2].GetInt(), p[3].GetString()});
  }
  if (auto it = v.FindMember("end"); it != v.MemberEnd()) {
    const Value& e = it->value;
    if (!e.IsObject() || !e.HasMember("v") || !e["v"].IsUint() || !e.HasMember("at") || !e["at"].IsInt64() ||
        !e.HasMember("res") || !e["res"].IsString() || !e.HasMember("final") || !e.HasMember("odds"))
      return err = "bad settlement anchor", false;
    s.ended = true;
    s.final_version = e["v"].GetUint();
    s.final_at = e["at"].GetInt64();
    if (!read_result(e["res"].GetString(), s.final_result)) return err = "bad result", false;
    const Value& f = e["final"];
    if (f.IsArray() && f.Size() == 2 && f[0].IsInt() && f[1].IsInt())
      s.final_score = std::make_pair(f[0].GetInt(), f[1].GetInt());
    else if (!f.IsNull())
      return err = "bad final score", false;
    if (!read_markets(e["odds"], s.odds_at_end, err)) return false;
  }
  return true;
}

bool read_entry(const Value& d, feed::FeedParser& parser, EventEntry& e, std::string& err) {
  if (!d.HasMember("at") || !get_i64(d["at"], e.updated_at) || !d.HasMember("id") || !d["id"].IsString() ||
      !d.HasMember("n") || !d["n"].IsUint64())
    return err = "state line without at, id or n", false;
  e.key = d["id"].GetString();
  e.number = d["n"].GetUint64();
  if (e.number == 0) return err = "state line with event number 0", false;
  if (auto it = d.FindMember("event"); it != d.MemberEnd()) {
    feed::Record r;
    if (!read_nested(it->value, parser, r, err)) return false;
    if (r.op() != feed::Op::Event) return err = "event: not an event record", false;
    e.info = std::get<std::shared_ptr<const feed::EventObject>>(r.body);
  }
  if (auto it = d.FindMember("markets"); it != d.MemberEnd())
    if (!read_markets(it->value, e.markets, err, e.number)) return false;
  for (const MarketRef& m : e.markets) e.odds_digest += m->digest;
  if (auto it = d.FindMember("withdrawn"); it != d.MemberEnd()) {
    const Value& w = it->value;
    if (!w.IsObject() || !w.HasMember("dropped") || !w["dropped"].IsUint() || !w.HasMember("markets"))
      return err = "bad withdrawn lines", false;
    auto h = std::make_shared<LineHistory>();
    h->dropped = w["dropped"].GetUint();
    if (!read_markets(w["markets"], h->markets, err)) return false;
    for (const MarketRef& m : h->markets) h->lines += static_cast<uint32_t>(m->lines.size());
    e.history = std::move(h);
  }
  if (auto it = d.FindMember("score"); it != d.MemberEnd()) {
    auto s = std::make_shared<ScoreState>();
    if (!read_score(it->value, parser, *s, err)) return false;
    e.score = std::move(s);
  }
  if (auto it = d.FindMember("stats"); it != d.MemberEnd()) {
    feed::Record r;
    if (!read_nested(it->value, parser, r, err)) return false;
    if (r.op() != feed::Op::Stats) return err = "stats: not a stats record", false;
    auto st = std::make_shared<StatsState>();
    const auto& sr = r.stats();
    st->values = sr.values;
    st->final = sr.final;
    st->ts = r.at;
    e.stats = std::move(st);
  }
  // As the engine keeps it: the history of an ended event is packed.
  if (e.score && e.score->ended) history_on_end(e.history, e.edit);
  return true;
}

// Line reader over a plain file that checks every line's checksum.
class CheckedLines {
 public:
  explicit CheckedLines(const std::string& path) : f_(std::fopen(path.c_str(), "rb")) {}
  // Over bytes in memory (a snapshot fetched from the bus).
  explicit CheckedLines(std::string_view data)
      : f_(data.empty() ? nullptr : fmemopen(const_cast<char*>(data.data()), data.size(), "rb")) {}
  ~CheckedLines() {
    std::free(buf_);
    if (f_) std::fclose(f_);
  }
  bool ok() const { return f_ != nullptr; }
  uint64_t line_no() const { return line_no_; }
  // Next line parsed into `doc`; false at the end (err empty) or on a bad
  // line (err set).
  bool next(rapidjson::Document& doc, std::string& err) {
    ssize_t n = getline(&buf_, &cap_, f_);
    if (n <= 0) return false;
    ++line_no_;
    bytes_ += static_cast<uint64_t>(n);
    if (buf_[n - 1] != '\n') return err = "line " + std::to_string(line_no_) + " is torn", false;
    std::string_view line(buf_, static_cast<size_t>(n - 1));
    if (feed::verify_checksum(line) != feed::ChecksumState::Valid)
      return err = "line " + std::to_string(line_no_) + " fails its checksum", false;
    // Bounded as a feed line: a snapshot may come over the bus from another node.
    if (!json::parse(line, doc, json::kFeedLimits) || !doc.IsObject())
      return err = "line " + std::to_string(line_no_) + " is not JSON", false;
    return true;
  }
  uint64_t bytes() const { return bytes_; }

 private:
  FILE* f_;
  char* buf_ = nullptr;
  size_t cap_ = 0;
  uint64_t line_no_ = 0, bytes_ = 0;
};

// `pos.feed_clock` stays INT64_MIN when the header predates retention.
bool read_header(rapidjson::Document& d, SnapshotInfo& info, Engine::Position& pos, std::string& err) {
  auto str_is = [&](const char* k, const char* want) {
    return d.HasMember(k) && d[k].IsString() && std::strcmp(d[k].GetString(), want) == 0;
  };
  if (!str_is("op", "header") || !str_is("format", "oddsfeed") || !str_is("kind", "snapshot"))
    return err = "not a snapshot header", false;
  if (!d.HasMember("version") || !d["version"].IsInt() || d["version"].GetInt() != 1)
    return err = "unsupported snapshot version", false;
  if (!d.HasMember("epoch") || !d["epoch"].IsString() || !d.HasMember("seq") || !d["seq"].IsUint64() ||
      !d.HasMember("clock") || !get_i64(d["clock"], pos.clock) || !d.HasMember("last_live_at") ||
      !get_i64(d["last_live_at"], pos.last_live_at))
    return err = "snapshot header lacks epoch, seq or clock", false;
  info.epoch = d["epoch"].GetString();
  info.seq = pos.seq = d["seq"].GetUint64();
  pos.feed_clock = INT64_MIN;
  if (auto it = d.FindMember("feed_clock"); it != d.MemberEnd() && !get_i64(it->value, pos.feed_clock))
    return err = "bad feed_clock in the snapshot header", false;
  if (auto it = d.FindMember("evicted"); it != d.MemberEnd()) {
    if (!it->value.IsUint64()) return err = "bad evicted in the snapshot header", false;
    info.evicted = pos.evicted = it->value.GetUint64();
  }
  if (auto it = d.FindMember("retain_ended"); it != d.MemberEnd() && !get_i64(it->value, info.retain_ended_ms))
    return err = "bad retain_ended in the snapshot header", false;
  return true;
}

}  // namespace

bool read_snapshot_header(const std::string& path, SnapshotInfo& info, std::string& err) {
  err.clear();
  CheckedLines lines(path);
  if (!lines.ok()) return err = "cannot open " + path + ": " + std::strerror(errno), false;
  rapidjson::Document d;
  if (!lines.next(d, err)) return err = path + ": " + (err.empty() ? "empty" : err), false;
  Engine::Position pos;
  if (!read_header(d, info, pos, err)) return err = path + ": " + err, false;
  return true;
}

namespace {

// Walks a snapshot file: the header, then every `state` line handed to
// `on_state` (which returns why it refuses one, empty when it takes it), up
// to an `end` line whose counts must be the file's. Sets info.events and
// info.bytes; every failure is "path: why".
bool walk_snapshot(CheckedLines& lines, const std::string& path, SnapshotInfo& info, Engine::Position& pos,
                   std::string& err, const std::function<std::string(const rapidjson::Document&)>& on_state) {
  rapidjson::Document d;
  auto fail = [&](const std::string& why) {
    err = path + ": " + why;
    return false;
  };
  if (!lines.next(d, err)) return fail(err.empty() ? "empty" : err);
  if (!read_header(d, info, pos, err)) return fail(err);
  uint64_t events = 0;
  for (;;) {
    if (!lines.next(d, err)) return fail(err.empty() ? "no end line (cut short)" : err);
    const char* op = d.HasMember("op") && d["op"].IsString() ? d["op"].GetString() : "";
    if (std::strcmp(op, "end") == 0) {
      if (!d.HasMember("events") || !d["events"].IsUint64() || d["events"].GetUint64() != events ||
          !d.HasMember("seq") || !d["seq"].IsUint64() || d["seq"].GetUint64() != info.seq)
        return fail("end line does not match the file");
      break;
    }
    if (std::strcmp(op, "state") != 0) return fail("line " + std::to_string(lines.line_no()) + ": unexpected op");
    if (on_state) {
      std::string why = on_state(d);
      if (!why.empty()) return fail(why);
    }
    ++events;
  }
  info.events = events;
  info.bytes = lines.bytes();
  return true;
}

bool load_snapshot_lines(CheckedLines& lines, const std::string& path, Engine& engine, SnapshotInfo& info,
                         std::string& err) {
  feed::FeedParser parser;
  uint64_t prev_number = 0;
  int64_t newest_at = INT64_MIN;
  Engine::Position pos;
  auto restore = [&](const rapidjson::Document& d) -> std::string {
    EventEntry e;
    std::string why;
    if (!read_entry(d, parser, e, why)) return "line " + std::to_string(lines.line_no()) + ": " + why;
    if (e.number <= prev_number) return "events out of order";
    prev_number = e.number;
    newest_at = std::max(newest_at, e.updated_at);
    engine.restore_entry(std::move(e));
    return {};
  };
  if (!walk_snapshot(lines, path, info, pos, err, restore)) return false;
  // A header of the log's first version has no feed_clock: the newest `at`.
  if (pos.feed_clock == INT64_MIN) pos.feed_clock = std::max(pos.clock, newest_at);
  engine.set_epoch(info.epoch);
  engine.restore_position(pos);
  engine.publish_restored();
  return true;
}

}  // namespace

bool check_snapshot_file(const std::string& path, SnapshotInfo& info, std::string& err) {
  err.clear();
  CheckedLines lines(path);
  if (!lines.ok()) return err = "cannot open " + path + ": " + std::strerror(errno), false;
  Engine::Position pos;
  return walk_snapshot(lines, path, info, pos, err, nullptr);
}

bool load_snapshot_file(const std::string& path, Engine& engine, SnapshotInfo& info, std::string& err) {
  err.clear();
  CheckedLines lines(path);
  if (!lines.ok()) return err = "cannot open " + path + ": " + std::strerror(errno), false;
  return load_snapshot_lines(lines, path, engine, info, err);
}

bool load_snapshot_data(std::string_view data, const std::string& name, Engine& engine, SnapshotInfo& info,
                        std::string& err) {
  err.clear();
  CheckedLines lines(data);
  if (!lines.ok()) return err = name + ": empty", false;
  return load_snapshot_lines(lines, name, engine, info, err);
}

}  // namespace oddsrelay
