#include "protocol/feed_reader.h"

#include <cstring>

#include "protocol/event_id.h"
#include "protocol/event_json.h"
#include "protocol/feed_writer.h"
#include "protocol/json_in.h"
#include "protocol/line_key.h"

namespace oddsrelay::feed {
namespace {

using Value = rapidjson::Value;

bool name_is(const Value::ConstMemberIterator& m, const char* name) {
  return std::strcmp(m->name.GetString(), name) == 0;
}

bool get_i64(const Value& v, int64_t& out) {
  if (!v.IsInt64()) return false;
  out = v.GetInt64();
  return true;
}

bool get_i32(const Value& v, int32_t& out) {
  if (!v.IsInt()) return false;
  out = v.GetInt();
  return true;
}

bool get_pair(const Value& v, std::pair<int32_t, int32_t>& out) {
  return v.IsArray() && v.Size() == 2 && get_i32(v[0], out.first) && get_i32(v[1], out.second);
}

// Whether a line may be a market record, from its first bytes: our writer
// and every example of docs/feed-format.md put `op` second, so another op is
// seen there and goes straight to the DOM path instead of starting on the
// fast one. A line with its fields in another order is tried on the fast
// path anyway.
bool maybe_market(std::string_view line) {
  constexpr std::string_view kOp = "\"op\":\"";
  const size_t p = line.substr(0, 48).find(kOp);
  return p == std::string_view::npos || line.substr(p + kOp.size(), 7) == "market\"";
}

}  // namespace

bool outcome_key(const char* s, size_t len, uint32_t& id) {
  if (len == 0 || len > 9) return false;
  uint32_t v = 0;
  for (size_t i = 0; i < len; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + static_cast<uint32_t>(s[i] - '0');
  }
  id = v;
  return v != 0;
}

FeedParser::FeedParser() : value_pool_(value_buf_, sizeof value_buf_), stack_pool_(stack_buf_, sizeof stack_buf_) {}

LineStatus FeedParser::fail(std::string msg) {
  error_ = std::move(msg);
  return LineStatus::Malformed;
}

LineStatus FeedParser::parse(std::string_view line, Record& out) {
  // JSON's whitespace, all four, at both ends: the text a record keeps (and
  // the journal writes back with its checksum) is then the object alone,
  // ending in its closing brace.
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!line.empty() && space(line.back())) line.remove_suffix(1);
  while (!line.empty() && space(line.front())) line.remove_prefix(1);
  if (line.empty()) return LineStatus::Blank;

  // A checksummed line (journal) is verified and parsed without the field.
  const ChecksumState sum = verify_checksum(line);
  if (sum == ChecksumState::Invalid) {
    error_ = "checksum mismatch";
    return LineStatus::BadChecksum;
  }
  auto copy = [&] {
    if (sum == ChecksumState::Valid) {
      scratch_.assign(line.data(), line.size() - kChecksumSuffixLen);
      scratch_.push_back('}');
    } else {
      scratch_.assign(line.data(), line.size());
    }
  };
  copy();

  // Kept before the in-situ parse rewrites the copy.
  if (keep_text_)
    out.text.assign(scratch_);
  else
    out.text.clear();
  if (fast_markets_ && maybe_market(line)) {
    if (parse_market_fast(scratch_.data(), out)) {
      ++fast_market_records_;
      return LineStatus::Record;
    }
    copy();  // the fast path gave up, part way through rewriting it
  }
  value_pool_.Clear();
  stack_pool_.Clear();
  json::PoolDoc doc(&value_pool_, 1024, &stack_pool_);
  // One object a line, nothing after it (json_in.h), within the feed's
  // limits: a nesting bomb is a malformed line, counted with its position.
  const json::InResult parsed = json::parse_insitu(scratch_.data(), doc, json::kFeedLimits);
  if (!parsed) return fail(parsed.message(json::kFeedLimits));
  if (!doc.IsObject()) return fail("record is not a JSON object");

  auto op_it = doc.FindMember("op");
  if (op_it == doc.MemberEnd() || !op_it->value.IsString()) return fail("'op' missing or not a string");
  const char* op = op_it->value.GetString();
  if (std::strcmp(op, "header") == 0) return parse_header(doc);

  auto at_it = doc.FindMember("at");
  if (at_it == doc.MemberEnd() || !at_it->value.IsInt64()) return fail("'at' missing or not an integer");
  auto id_it = doc.FindMember("id");
  if (id_it == doc.MemberEnd() || !id_it->value.IsString()) return fail("'id' missing or not a string");

  bool ok;
  if (std::strcmp(op, "event") == 0)
    ok = parse_event(doc, out);
  else if (std::strcmp(op, "market") == 0)
    ok = parse_market(doc, out);
  else if (std::strcmp(op, "score") == 0)
    ok = parse_score(doc, out);
  else if (std::strcmp(op, "stats") == 0)
    ok = parse_stats(doc, out);
  else if (std::strcmp(op, "remove") == 0) {
    for (auto m = doc.MemberBegin(); m != doc.MemberEnd(); ++m)
      if (!name_is(m, "at") && !name_is(m, "op") && !name_is(m, "id")) ++unknown_fields_;
    out.body = RemoveRec{};
    ok = true;
  } else {
    error_ = std::string("unknown op '") + op + "'";
    return LineStatus::UnknownOp;
  }
  if (!ok) return LineStatus::Malformed;

  std::string_view id(id_it->value.GetString(), id_it->value.GetStringLength());
  ParsedId pid = parse_event_id(id);
  if (!pid.ok()) return fail("'id' is not a valid event id: " + std::string(id.substr(0, 64)));
  out.at = at_it->value.GetInt64();
  out.id.assign(id);
  out.number = pid.number;
  return LineStatus::Record;
}

LineStatus FeedParser::parse_header(const Value& v) {
  auto fmt = v.FindMember("format");
  if (fmt != v.MemberEnd() && (!fmt->value.IsString() || std::strcmp(fmt->value.GetString(), "oddsfeed") != 0))
    return fail("header 'format' is not \"oddsfeed\"");
  auto ver = v.FindMember("version");
  if (ver == v.MemberEnd() || !ver->value.IsInt()) return fail("header 'version' missing or not an integer");
  if (ver->value.GetInt() != 1) {
    error_ = "unsupported feed format version " + std::to_string(ver->value.GetInt()) + " (this reader knows 1)";
    return LineStatus::UnsupportedVersion;
  }
  auto prov = v.FindMember("provider");
  if (prov != v.MemberEnd() && prov->value.IsString()) provider_ = prov->value.GetString();
  return LineStatus::Header;
}

bool FeedParser::parse_event(const Value& v, Record& out) {
  auto it = v.FindMember("event");
  if (it == v.MemberEnd() || !it->value.IsObject()) return fail("'event' missing or not an object"), false;
  auto e = std::make_shared<EventObject>();
  bool have_sport = false;
  for (auto m = it->value.MemberBegin(); m != it->value.MemberEnd(); ++m) {
    const Value& f = m->value;
    const char* k = m->name.GetString();
    bool good = true;
    if (!std::strcmp(k, "c")) {
      good = f.IsArray() && f.Size() == 4 && f[0].IsInt64() && f[1].IsString() && f[2].IsInt64() && f[3].IsString();
      if (good) e->c = CountryTuple{f[0].GetInt64(), f[1].GetString(), f[2].GetInt64(), f[3].GetString()};
    } else if (!std::strcmp(k, "t")) {
      good = f.IsArray() && f.Size() == 3 && f[0].IsInt64() && f[1].IsString() && f[2].IsInt64();
      if (good) e->t = TournamentTuple{f[0].GetInt64(), f[1].GetString(), f[2].GetInt64()};
    } else if (!std::strcmp(k, "g"))
      good = get_i64(f, e->g);
    else if (!std::strcmp(k, "ts"))
      good = get_i64(f, e->ts);
    else if (!std::strcmp(k, "h")) {
      good = f.IsString();
      if (good) e->h = f.GetString();
    } else if (!std::strcmp(k, "a")) {
      good = f.IsString();
      if (good) e->a = f.GetString();
    } else if (!std::strcmp(k, "co"))
      good = get_i64(f, e->co);
    else if (!std::strcmp(k, "s"))
      good = get_i64(f, e->s);
    else if (!std::strcmp(k, "ms")) {
      if (!f.IsNull()) {
        int64_t x;
        good = get_i64(f, x);
        if (good) e->ms = x;
      }
    } else if (!std::strcmp(k, "live")) {
      good = f.IsBool();
      if (good) e->live = f.GetBool();
    } else if (!std::strcmp(k, "sport")) {
      good = get_i32(f, e->sport) && e->sport > 0;
      have_sport = good;
    } else if (!std::strcmp(k, "map")) {
      good = f.IsObject();
      // Member iterators exist only on objects (fuzz-found: "map":true).
      if (good)
        for (auto b = f.MemberBegin(); good && b != f.MemberEnd(); ++b) {
          MapEntry me;
          me.key = b->name.GetString();
          good = b->value.IsObject() && parse_event_id(me.key).ok();
          if (!good) break;
          for (auto bf = b->value.MemberBegin(); bf != b->value.MemberEnd(); ++bf) {
            if (name_is(bf, "p"))
              good = good && get_i64(bf->value, me.p);
            else
              ++unknown_fields_;
          }
          e->map.push_back(std::move(me));
        }
    } else {
      ++unknown_fields_;
    }
    if (!good) return fail(std::string("event field '") + k + "' has the wrong type"), false;
  }
  if (!have_sport) return fail("event 'sport' missing"), false;
  finalize_event_json(*e);
  for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m)
    if (!name_is(m, "at") && !name_is(m, "op") && !name_is(m, "id") && !name_is(m, "event")) ++unknown_fields_;
  out.body = std::shared_ptr<const EventObject>(std::move(e));
  return true;
}

bool FeedParser::parse_market(const Value& v, Record& out) {
  MarketRec mr;
  bool have_lines = false;
  for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
    if (name_is(m, "market")) {
      if (!m->value.IsUint() || m->value.GetUint() == 0) return fail("'market' is not a positive integer"), false;
      mr.market = m->value.GetUint();
    } else if (name_is(m, "lines")) {
      if (!m->value.IsObject()) return fail("'lines' is not an object"), false;
      have_lines = true;
      // Sized once: growing both vectors step by step cost ~8 allocations
      // a record (and as many frees on the engine side).
      size_t nouts = 0;
      for (auto l = m->value.MemberBegin(); l != m->value.MemberEnd(); ++l)
        if (l->value.IsObject())
          for (auto f = l->value.MemberBegin(); f != l->value.MemberEnd(); ++f)
            if (name_is(f, "o") && f->value.IsObject()) nouts += f->value.MemberCount();
      mr.lines.reserve(m->value.MemberCount());
      mr.outcomes.reserve(nouts);
      for (auto l = m->value.MemberBegin(); l != m->value.MemberEnd(); ++l) {
        LineIn line;
        line.key.assign(l->name.GetString(), l->name.GetStringLength());
        if (classify_line_key(line.key) == LineKeyKind::Invalid)
          return fail("invalid line key '" + line.key.substr(0, 32) + "'"), false;
        if (!l->value.IsObject()) return fail("line '" + line.key + "' is not an object"), false;
        line.first = static_cast<uint32_t>(mr.outcomes.size());
        for (auto f = l->value.MemberBegin(); f != l->value.MemberEnd(); ++f) {
          if (name_is(f, "s")) {
            if (!f->value.IsUint() || f->value.GetUint() > 1) return fail("line 's' is not 0 or 1"), false;
            line.suspended = static_cast<uint8_t>(f->value.GetUint());
          } else if (name_is(f, "o")) {
            if (!f->value.IsObject()) return fail("line 'o' is not an object"), false;
            for (auto o = f->value.MemberBegin(); o != f->value.MemberEnd(); ++o) {
              OutcomeIn oc;
              const Value& t = o->value;
              if (!outcome_key(o->name.GetString(), o->name.GetStringLength(), oc.id))
                return fail("outcome id is not a positive integer"), false;
              if (!t.IsArray() || t.Size() != 2 || !t[0].IsInt() || t[0].GetInt() < 0 || !t[1].IsUint())
                return fail("outcome is not [price_x100, flags]"), false;
              oc.price = t[0].GetInt();
              oc.flags = t[1].GetUint();
              mr.outcomes.push_back(oc);
            }
          } else {
            ++unknown_fields_;
          }
        }
        line.count = static_cast<uint32_t>(mr.outcomes.size()) - line.first;
        mr.lines.push_back(std::move(line));
      }
    } else if (!name_is(m, "at") && !name_is(m, "op") && !name_is(m, "id")) {
      ++unknown_fields_;
    }
  }
  if (mr.market == 0) return fail("'market' missing"), false;
  if (!have_lines) return fail("'lines' missing"), false;
  out.body = std::move(mr);
  return true;
}

bool FeedParser::parse_score(const Value& v, Record& out) {
  ScoreRec s;
  bool have_status = false;
  for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
    const Value& f = m->value;
    const char* k = m->name.GetString();
    bool good = true;
    if (!std::strcmp(k, "home") || !std::strcmp(k, "away")) {
      auto& dst = k[0] == 'h' ? s.home : s.away;
      if (!f.IsNull()) {
        int32_t x;
        good = get_i32(f, x) && x >= 0;
        if (good) dst = x;
      }
    } else if (!std::strcmp(k, "status")) {
      good = f.IsString();
      if (good) {
        const char* st = f.GetString();
        if (!std::strcmp(st, "scheduled"))
          s.status = ScoreStatus::Scheduled;
        else if (!std::strcmp(st, "live"))
          s.status = ScoreStatus::Live;
        else if (!std::strcmp(st, "ended"))
          s.status = ScoreStatus::Ended;
        else
          good = false;
      }
      have_status = good;
    } else if (!std::strcmp(k, "clock")) {
      good = f.IsString();
      if (good) s.clock = f.GetString();
    } else if (!std::strcmp(k, "period")) {
      good = f.IsString();
      if (good) s.period = f.GetString();
    } else if (!std::strcmp(k, "match_length")) {
      int32_t x;
      good = get_i32(f, x);
      if (good) s.match_length = x;
    } else if (!std::strcmp(k, "ht")) {
      std::pair<int32_t, int32_t> p;
      good = get_pair(f, p);
      if (good) s.ht = p;
    } else if (!std::strcmp(k, "kickoff")) {
      int64_t x;
      good = get_i64(f, x);
      if (good) s.kickoff = x;
    } else if (!std::strcmp(k, "result")) {
      good = f.IsString();
      if (good) {
        const char* r = f.GetString();
        if (!std::strcmp(r, "completed"))
          s.result = MatchResult::Completed;
        else if (!std::strcmp(r, "abandoned"))
          s.result = MatchResult::Abandoned;
        else if (!std::strcmp(r, "cancelled"))
          s.result = MatchResult::Cancelled;
        else if (!std::strcmp(r, "expunged"))
          s.result = MatchResult::Expunged;
        else
          good = false;
      }
    } else if (!std::strcmp(k, "postponed")) {
      good = f.IsBool();
      if (good) s.postponed = f.GetBool();
    } else if (std::strcmp(k, "at") && std::strcmp(k, "op") && std::strcmp(k, "id"))
      ++unknown_fields_;
    if (!good) return fail(std::string("score field '") + k + "' has the wrong type or value"), false;
  }
  if (!have_status) return fail("score 'status' missing"), false;
  out.body = std::move(s);
  return true;
}

bool FeedParser::parse_stats(const Value& v, Record& out) {
  StatsRec s;
  for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
    const char* k = m->name.GetString();
    if (!std::strcmp(k, "final")) {
      if (!m->value.IsBool()) return fail("stats 'final' is not a boolean"), false;
      s.final = m->value.GetBool();
      continue;
    }
    bool known = false;
    for (size_t i = 0; i < kStatNames.size(); ++i) {
      if (std::strcmp(k, kStatNames[i])) continue;
      std::pair<int32_t, int32_t> p;
      if (!get_pair(m->value, p)) return fail(std::string("stats '") + k + "' is not [home, away]"), false;
      s.values[i] = p;
      known = true;
    }
    if (!known && std::strcmp(k, "at") && std::strcmp(k, "op") && std::strcmp(k, "id")) ++unknown_fields_;
  }
  out.body = std::move(s);
  return true;
}

}  // namespace oddsrelay::feed
