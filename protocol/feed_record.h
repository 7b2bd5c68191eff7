// One upstream record of the feed format (docs/feed-format.md), parsed into typed
// form. Sources produce these, the engine applies them, the journal and
// capture re-encode them with feed_writer.h. Plain data, no behaviour.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace oddsrelay::feed {

// The compact-key event object (docs/api.md). `json` is its canonical encoding,
// made once where the record is parsed (a source thread) so that nothing
// downstream encodes an event again.
struct CountryTuple {
  int64_t id = 0;
  std::string name;
  int64_t source_sport = 0;
  std::string iso2;
};
struct TournamentTuple {
  int64_t id = 0;
  std::string name;
  int64_t priority = 0;  // smaller = more visible
};
struct MapEntry {
  std::string key;  // binding-prefixed id, e.g. s7_l12.345
  int64_t p = 0;    // 0 available, non-zero suspended/locked
};
struct EventObject {
  std::optional<CountryTuple> c;
  std::optional<TournamentTuple> t;
  int64_t g = 0;
  int64_t ts = 0;  // kickoff, unix seconds
  std::string h, a;
  int64_t co = 0;
  std::vector<MapEntry> map;
  int64_t s = 0;
  std::optional<int64_t> ms;
  bool live = false;
  int32_t sport = 0;
  std::string json;  // canonical encoding, filled by finalize_event_json()
};

struct OutcomeIn {
  uint32_t id = 0;
  int32_t price = 0;  // decimal odds x 100
  uint32_t flags = 0;
};
struct LineIn {
  std::string key;        // "s", "s2.5", "s-0.75", "s1:0"
  uint8_t suspended = 0;  // line-level s
  uint32_t first = 0;     // index of its first outcome in MarketRec::outcomes
  uint32_t count = 0;     // number of outcomes (0 = empty rung)
};
// Full replacement of one market; no lines = remove the market.
struct MarketRec {
  uint32_t market = 0;
  std::vector<LineIn> lines;
  std::vector<OutcomeIn> outcomes;  // all lines' outcomes, flat, in line order
};

enum class ScoreStatus : uint8_t { Scheduled, Live, Ended };
enum class MatchResult : uint8_t { None, Completed, Abandoned, Cancelled, Expunged };

struct ScoreRec {
  std::optional<int32_t> home, away;
  ScoreStatus status = ScoreStatus::Scheduled;
  std::optional<std::string> clock;  // "MM:SS"
  std::optional<std::string> period;
  std::optional<int32_t> match_length;
  std::optional<std::pair<int32_t, int32_t>> ht;
  std::optional<int64_t> kickoff;          // unix seconds
  MatchResult result = MatchResult::None;  // None: field absent
  bool postponed = false;
};

// Index order of StatsRec::values; names as on the wire.
inline constexpr std::array<const char*, 6> kStatNames = {"corners",    "yellow_cards", "red_cards",
                                                          "free_kicks", "shots",        "fouls"};
struct StatsRec {
  std::array<std::optional<std::pair<int32_t, int32_t>>, 6> values;
  bool final = false;
};
struct RemoveRec {};

// A record's rarer, larger bodies (a score is 152 bytes, stats 76) are held
// out of line, so a Record is sized for a market (the body nearly every
// record carries: 56 bytes) and is 152 bytes instead of 248. Every record
// is moved once into its batch (Engine::intake), and at a catch-up's 16,384
// records a batch that is 1.5 MB less to write to fresh memory. A value
// type: copies copy the body; a moved-from box is empty and only assigned
// to again, as a moved-from record is.
template <class T>
class Boxed {
 public:
  Boxed() : p_(std::make_unique<T>()) {}
  Boxed(T v) : p_(std::make_unique<T>(std::move(v))) {}  // NOLINT: implicit, so `body = ScoreRec{...}` reads as before
  // A moved-from box copies as empty, as it was.
  Boxed(const Boxed& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  T& operator*() { return *p_; }
  const T& operator*() const { return *p_; }
  T* operator->() { return p_.get(); }
  const T* operator->() const { return p_.get(); }

 private:
  std::unique_ptr<T> p_;
};

enum class Op : uint8_t { Event, Remove, Market, Score, Stats };

struct Record {
  int64_t at = 0;       // upstream unix ms; the engine clock
  std::string id;       // the id as written upstream
  uint64_t number = 0;  // the event number: the identity
  std::variant<std::shared_ptr<const EventObject>, RemoveRec, MarketRec, Boxed<ScoreRec>, Boxed<StatsRec>> body;
  // The line this record was parsed from: the object alone, ending in its
  // closing brace (no whitespace around it, no journal checksum), kept only
  // when a parser was asked to (FeedParser::keep_text): the journal,
  // captures and the bus then write it as it is instead of encoding the
  // record again, which cost more than parsing it. Empty for records built
  // in code (the simulator, tests): those are encoded.
  std::string text;
  // When the record reached this node (mono_ns(), protocol/clock.h): the
  // simulator stamps it when it makes it, a replay when the record is due
  // (read, at max speed), the bus follower when the message came. Not the
  // feed's time (`at`) and never written anywhere; 0 = not stamped.
  int64_t arrived_ns = 0;

  Op op() const { return static_cast<Op>(body.index()); }
  // The body as what op() says it is (std::get: throws on another).
  const ScoreRec& score() const { return *std::get<Boxed<ScoreRec>>(body); }
  ScoreRec& score() { return *std::get<Boxed<ScoreRec>>(body); }
  const StatsRec& stats() const { return *std::get<Boxed<StatsRec>>(body); }
  StatsRec& stats() { return *std::get<Boxed<StatsRec>>(body); }
};

const char* op_name(Op op);
const char* status_name(ScoreStatus s);
const char* result_name(MatchResult r);

}  // namespace oddsrelay::feed
