#include "protocol/feed_writer.h"

#include <cstdio>
#include <cstring>

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>

#include "protocol/event_json.h"
#include "protocol/json_out.h"

namespace oddsrelay::feed {
namespace {

void write_optional_int(json::Writer& w, const std::optional<int32_t>& v) {
  if (v)
    w.Int(*v);
  else
    w.Null();
}

void write_market(json::Writer& w, const MarketRec& m) {
  w.Key("market");
  w.Uint(m.market);
  w.Key("lines");
  w.StartObject();
  for (const auto& line : m.lines) {
    json::key(w, line.key);
    w.StartObject();
    w.Key("s");
    w.Uint(line.suspended);
    w.Key("o");
    w.StartObject();
    for (uint32_t i = line.first; i < line.first + line.count; ++i) {
      const OutcomeIn& o = m.outcomes[i];
      json::id_key(w, o.id);
      w.StartArray();
      w.Int(o.price);
      w.Uint(o.flags);
      w.EndArray();
    }
    w.EndObject();
    w.EndObject();
  }
  w.EndObject();
}

void write_score(json::Writer& w, const ScoreRec& s) {
  w.Key("home");
  write_optional_int(w, s.home);
  w.Key("away");
  write_optional_int(w, s.away);
  w.Key("status");
  w.String(status_name(s.status));
  if (s.clock) {
    w.Key("clock");
    json::str(w, *s.clock);
  }
  if (s.period) {
    w.Key("period");
    json::str(w, *s.period);
  }
  if (s.match_length) {
    w.Key("match_length");
    w.Int(*s.match_length);
  }
  if (s.ht) {
    w.Key("ht");
    json::pair(w, *s.ht);
  }
  if (s.kickoff) {
    w.Key("kickoff");
    w.Int64(*s.kickoff);
  }
  if (s.result != MatchResult::None) {
    w.Key("result");
    w.String(result_name(s.result));
  }
  if (s.postponed) {
    w.Key("postponed");
    w.Bool(true);
  }
}

void write_stats(json::Writer& w, const StatsRec& s) {
  for (size_t i = 0; i < s.values.size(); ++i) {
    if (!s.values[i]) continue;
    w.Key(kStatNames[i]);
    json::pair(w, *s.values[i]);
  }
  if (s.final) {
    w.Key("final");
    w.Bool(true);
  }
}

}  // namespace

void write_record_head(json::Writer& w, int64_t at, const char* op, std::string_view id) {
  w.Key("at");
  w.Int64(at);
  w.Key("op");
  w.String(op);
  w.Key("id");
  json::str(w, id);
}

void write_record(const Record& rec, std::string& out) {
  if (!rec.text.empty()) {  // the line it was parsed from says the same
    out += rec.text;
    return;
  }
  json::append_object(out, [&](json::Writer& w) {
    write_record_head(w, rec.at, op_name(rec.op()), rec.id);
    switch (rec.op()) {
      case Op::Event: {
        const auto& e = std::get<std::shared_ptr<const EventObject>>(rec.body);
        w.Key("event");
        if (!e->json.empty())
          w.RawValue(e->json.data(), e->json.size(), rapidjson::kObjectType);
        else
          write_event_object(w, *e);
        break;
      }
      case Op::Remove:
        break;
      case Op::Market:
        write_market(w, std::get<MarketRec>(rec.body));
        break;
      case Op::Score:
        write_score(w, rec.score());
        break;
      case Op::Stats:
        write_stats(w, rec.stats());
        break;
    }
  });
}

void write_header_fields(json::Writer& w, std::string_view provider) {
  w.Key("op");
  w.String("header");
  w.Key("format");
  w.String("oddsfeed");
  w.Key("version");
  w.Int(1);
  w.Key("provider");
  json::str(w, provider);
}

void write_header(std::string_view provider, std::string& out) {
  json::append_object(out, [&](json::Writer& w) { write_header_fields(w, provider); });
}

void checksum_suffix(std::string_view line, char* out) {
  uint64_t h = XXH3_64bits(line.data(), line.size());
  std::memcpy(out, kChecksumField.data(), kChecksumField.size());
  // Sixteen hex digits by hand: every journal record pays for this line.
  static constexpr char kHex[] = "0123456789abcdef";
  char* hex = out + kChecksumField.size();
  for (int i = 15; i >= 0; --i, h >>= 4) hex[i] = kHex[h & 15];
  hex[16] = '"';
  hex[17] = '}';
}

void append_checksum(std::string& out, size_t start) {
  char suffix[kChecksumSuffixLen];
  checksum_suffix(std::string_view(out).substr(start), suffix);
  out.pop_back();  // the closing brace
  out.append(suffix, sizeof suffix);
}

ChecksumState verify_checksum(std::string_view line) {
  if (line.size() < kChecksumSuffixLen + 2 || line.substr(line.size() - 2) != "\"}") return ChecksumState::Absent;
  size_t at = line.size() - kChecksumSuffixLen;
  if (line.substr(at, kChecksumField.size()) != kChecksumField) return ChecksumState::Absent;
  uint64_t want = 0;
  for (size_t i = at + kChecksumField.size(); i < line.size() - 2; ++i) {
    char c = line[i];
    unsigned d;
    if (c >= '0' && c <= '9')
      d = static_cast<unsigned>(c - '0');
    else if (c >= 'a' && c <= 'f')
      d = static_cast<unsigned>(c - 'a' + 10);
    else
      return ChecksumState::Invalid;
    want = (want << 4) | d;
  }
  XXH3_state_t st;
  XXH3_64bits_reset(&st);
  XXH3_64bits_update(&st, line.data(), at);
  XXH3_64bits_update(&st, "}", 1);
  return XXH3_64bits_digest(&st) == want ? ChecksumState::Valid : ChecksumState::Invalid;
}

const char* op_name(Op op) {
  switch (op) {
    case Op::Event:
      return "event";
    case Op::Remove:
      return "remove";
    case Op::Market:
      return "market";
    case Op::Score:
      return "score";
    case Op::Stats:
      return "stats";
  }
  return "?";
}

const char* status_name(ScoreStatus s) {
  switch (s) {
    case ScoreStatus::Scheduled:
      return "scheduled";
    case ScoreStatus::Live:
      return "live";
    case ScoreStatus::Ended:
      return "ended";
  }
  return "?";
}

const char* result_name(MatchResult r) {
  switch (r) {
    case MatchResult::None:
      return "";
    case MatchResult::Completed:
      return "completed";
    case MatchResult::Abandoned:
      return "abandoned";
    case MatchResult::Cancelled:
      return "cancelled";
    case MatchResult::Expunged:
      return "expunged";
  }
  return "?";
}

}  // namespace oddsrelay::feed
