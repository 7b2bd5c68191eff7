// The fast path of FeedParser::parse for market records, nearly every line
// of a feed: RapidJSON's SAX reader in situ builds the MarketRec as the
// tokens go by, with no document in between (the DOM path built one, then
// walked it: bench_parse). It takes only the plain shape of a market line
// (at, op, id, market and lines, each once; lines of s and o) and gives up
// on anything else: another op, an unknown field, a wrong type, a bad key.
// The caller then parses the line again on the DOM path, which accepts,
// counts or reports it exactly as before, so both paths agree on every line
// (feed_market_sax_test.cc and the feed_line fuzz target compare them).

#include <rapidjson/reader.h>

#include <cstring>
#include <limits>

#include "protocol/event_id.h"
#include "protocol/feed_reader.h"
#include "protocol/json_in.h"
#include "protocol/line_key.h"

namespace oddsrelay::feed {
namespace {

// Reader handler: each callback returns false to give up, which stops the
// reader at once (kParseErrorTermination).
class MarketHandler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, MarketHandler> {
 public:
  MarketHandler(std::vector<LineIn>& lines, std::vector<OutcomeIn>& outcomes) : lines_(lines), outcomes_(outcomes) {
    lines_.clear();
    outcomes_.clear();
  }

  // Every callback the shape does not expect lands here.
  bool Default() { return false; }

  bool Key(const char* s, rapidjson::SizeType len, bool) {
    switch (where_) {
      case Where::Root: {
        const Field f = root_field(s, len);
        const unsigned bit = 1u << static_cast<unsigned>(f);
        if (f == Field::None || (seen_ & bit)) return false;
        seen_ |= bit;
        field_ = f;
        return true;
      }
      case Where::Lines:
        if (classify_line_key(std::string_view(s, len)) == LineKeyKind::Invalid) return false;
        lines_.emplace_back();
        lines_.back().key.assign(s, len);
        lines_.back().first = static_cast<uint32_t>(outcomes_.size());
        field_ = Field::None;
        return true;
      case Where::Line:
        if (len != 1 || (s[0] != 's' && s[0] != 'o')) return false;
        field_ = s[0] == 's' ? Field::S : Field::O;
        return true;
      case Where::Outcomes:
        return outcome_id(s, len);
      default:
        return false;
    }
  }

  bool StartObject() {
    switch (where_) {
      case Where::Start:
        where_ = Where::Root;
        return true;
      case Where::Root:
        if (field_ != Field::Lines) return false;
        where_ = Where::Lines;
        return true;
      case Where::Lines:
        if (lines_.empty() || field_ != Field::None) return false;
        where_ = Where::Line;
        return true;
      case Where::Line:
        if (field_ != Field::O) return false;
        where_ = Where::Outcomes;
        return true;
      default:
        return false;
    }
  }

  bool EndObject(rapidjson::SizeType) {
    switch (where_) {
      case Where::Root:
        where_ = Where::Done;
        return true;
      case Where::Lines:
        where_ = Where::Root;
        return true;
      case Where::Line:
        lines_.back().count = static_cast<uint32_t>(outcomes_.size()) - lines_.back().first;
        where_ = Where::Lines;
        field_ = Field::None;
        return true;
      case Where::Outcomes:
        where_ = Where::Line;
        return true;
      default:
        return false;
    }
  }

  bool StartArray() {
    if (where_ != Where::Outcomes || !pending_) return false;
    where_ = Where::Pair;
    taken_ = 0;
    return true;
  }
  bool EndArray(rapidjson::SizeType n) {
    if (where_ != Where::Pair || n != 2) return false;
    outcomes_.push_back(next_);
    pending_ = false;
    where_ = Where::Outcomes;
    return true;
  }

  // Non-negative integers below 2^32 come as Uint; negatives as Int or
  // Int64; larger ones as Uint64 (rapidjson/reader.h ParseNumber).
  bool Uint(unsigned u) { return number(u); }
  bool Uint64(uint64_t u) { return number(u); }
  bool Int(int i) { return negative(i); }
  bool Int64(int64_t i) { return negative(i); }

  bool String(const char* s, rapidjson::SizeType len, bool) {
    if (where_ != Where::Root) return false;
    if (field_ == Field::Op) return len == 6 && std::memcmp(s, "market", 6) == 0;
    if (field_ != Field::Id) return false;
    id_ = std::string_view(s, len);
    return true;
  }

  // After the reader returned: the whole record was there.
  bool complete() const { return where_ == Where::Done && seen_ == kAll && market_ != 0; }
  int64_t at() const { return at_; }
  std::string_view id() const { return id_; }
  uint32_t market() const { return market_; }

 private:
  enum class Where : uint8_t { Start, Root, Lines, Line, Outcomes, Pair, Done };
  enum class Field : uint8_t { At, Op, Id, Market, Lines, S, O, None };
  static constexpr unsigned kAll = 0x1f;  // at, op, id, market, lines

  // Compared by length and bytes, not through memcmp calls: a key a field.
  static Field root_field(const char* s, size_t len) {
    switch (len) {
      case 2:
        if (s[0] == 'a' && s[1] == 't') return Field::At;
        if (s[0] == 'o' && s[1] == 'p') return Field::Op;
        if (s[0] == 'i' && s[1] == 'd') return Field::Id;
        return Field::None;
      case 5:
        return std::memcmp(s, "lines", 5) == 0 ? Field::Lines : Field::None;
      case 6:
        return std::memcmp(s, "market", 6) == 0 ? Field::Market : Field::None;
      default:
        return Field::None;
    }
  }

  bool number(uint64_t u) {
    switch (where_) {
      case Where::Root:
        if (field_ == Field::At) {
          if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
          at_ = static_cast<int64_t>(u);
          return true;
        }
        if (field_ == Field::Market) {
          if (u == 0 || u > std::numeric_limits<uint32_t>::max()) return false;
          market_ = static_cast<uint32_t>(u);
          return true;
        }
        return false;
      case Where::Line:
        if (field_ != Field::S || u > 1) return false;
        lines_.back().suspended = static_cast<uint8_t>(u);
        return true;
      case Where::Pair:
        // [price_x100 (a non-negative int), flags (an unsigned 32-bit int)]
        if (taken_ == 0) {
          if (u > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) return false;
          next_.price = static_cast<int32_t>(u);
        } else if (taken_ == 1) {
          if (u > std::numeric_limits<uint32_t>::max()) return false;
          next_.flags = static_cast<uint32_t>(u);
        } else {
          return false;
        }
        ++taken_;
        return true;
      default:
        return false;
    }
  }
  bool negative(int64_t i) {
    if (where_ != Where::Root || field_ != Field::At) return false;
    at_ = i;
    return true;
  }
  bool outcome_id(const char* s, size_t len) {
    uint32_t id;
    if (pending_ || !outcome_key(s, len, id)) return false;
    next_ = OutcomeIn{id, 0, 0};
    pending_ = true;
    return true;
  }

  std::vector<LineIn>& lines_;
  std::vector<OutcomeIn>& outcomes_;
  Where where_ = Where::Start;
  Field field_ = Field::None;
  unsigned seen_ = 0;
  int64_t at_ = 0;
  std::string_view id_;
  uint32_t market_ = 0;
  OutcomeIn next_;
  bool pending_ = false;  // an outcome key read, its pair not yet
  int taken_ = 0;         // numbers of the pair read
};

}  // namespace

bool FeedParser::parse_market_fast(char* text, Record& out) {
  MarketHandler h(fast_lines_, fast_outcomes_);
  json::InsituStream in(text);
  rapidjson::Reader reader;
  // As the DOM path (protocol/json_in.h): nothing but whitespace may follow
  // the object, and strings are UTF-8. The shape bounds the depth: the
  // handler gives up on any container it does not expect, so the recursive
  // reader never goes past the outcomes.
  constexpr unsigned kFlags = rapidjson::kParseInsituFlag | rapidjson::kParseValidateEncodingFlag;
  if (reader.Parse<kFlags>(in, h).IsError() || !h.complete()) return false;
  const ParsedId pid = parse_event_id(h.id());
  if (!pid.ok()) return false;
  MarketRec mr;
  mr.market = h.market();
  // Copied out at their size: the scratch vectors keep their capacity for
  // the next line, so a record costs two allocations, not a growth series.
  mr.lines.assign(std::make_move_iterator(fast_lines_.begin()), std::make_move_iterator(fast_lines_.end()));
  mr.outcomes.assign(fast_outcomes_.begin(), fast_outcomes_.end());
  out.body = std::move(mr);
  out.at = h.at();
  out.id.assign(h.id());
  out.number = pid.number;
  return true;
}

}  // namespace oddsrelay::feed
