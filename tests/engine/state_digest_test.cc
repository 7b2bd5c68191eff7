// The state digest is the proof that a restart, a capture, a gzip copy or
// (later) a snapshot or an edge equals its source; every durability test
// leans on it, so it is tested here on its own: it sees every field (one
// variant per field must change it), it ignores how the state was reached
// (order of unrelated records, batching), and its value is pinned.
#include "engine/core/state_digest.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <functional>
#include <set>

#include "protocol/event_json.h"
#include "tests/test_util.h"

namespace oddsrelay {
namespace {

constexpr int64_t T = 1767225600000;

std::string at(int64_t dt) { return std::to_string(T + dt); }

// A base feed that reaches every field: a live soccer event with two
// updates of a market (prev_price, ts), an empty rung, a suspended line, a
// timeline, a final with odds at the end (the market is then pulled and
// re-offered, so the current odds do not depend on what came before the
// end), stats; a pre-match tennis event; a listed event removed with its
// score kept; odds without an event record.
std::vector<std::string> base_feed() {
  const std::string ev101 =
      R"("event":{"c":[1,"England",1,"GB"],"t":[1001,"Premier League",1],"g":11,"ts":1767225600,"h":"Leeds","a":"York","co":101,"map":{"s7_l1.101":{"p":0}},"s":0,"ms":10,"live":true,"sport":1})";
  const std::string ev202 =
      R"("event":{"c":[2,"France",5,"FR"],"t":[2002,"Open",4],"g":22,"ts":1767229200,"h":"Ana","a":"Bea","co":202,"map":{"s7_p1.202":{"p":1}},"s":0,"live":false,"sport":5})";
  const std::string ev303 =
      R"("event":{"c":[1,"England",1,"GB"],"t":[1001,"Premier League",1],"g":33,"ts":1767225600,"h":"Hull","a":"Bury","co":303,"map":{},"s":0,"live":true,"sport":1})";
  return {
      R"({"at":)" + at(0) + R"(,"op":"event","id":"s7-1.101",)" + ev101 + "}",
      R"({"at":)" + at(100) +
          R"(,"op":"market","id":"s7-1.101","market":1001,"lines":{"s":{"s":0,"o":{"2001":[185,0],"2002":[340,0],"2003":[420,1]}},"s2.5":{"s":1,"o":{"2101":[190,0],"2102":[180,0]}},"s3":{"s":0,"o":{}}}})",
      R"({"at":)" + at(150) + R"(,"op":"event","id":"s7-1.202",)" + ev202 + "}",
      R"({"at":)" + at(200) +
          R"(,"op":"market","id":"s7-1.101","market":1001,"lines":{"s":{"s":0,"o":{"2001":[190,0],"2002":[340,0],"2003":[420,1]}},"s2.5":{"s":1,"o":{"2101":[190,0],"2102":[180,0]}},"s3":{"s":0,"o":{}}}})",
      R"({"at":)" + at(250) +
          R"(,"op":"market","id":"s7-1.202","market":1002,"lines":{"s":{"s":0,"o":{"3001":[150,0],"3002":[250,0]}}}})",
      R"({"at":)" + at(300) +
          R"(,"op":"score","id":"s7-1.101","home":0,"away":0,"status":"live","clock":"10:00","period":"1H","match_length":90,"kickoff":1767225600})",
      R"({"at":)" + at(350) + R"(,"op":"event","id":"s7-1.303",)" + ev303 + "}",
      R"({"at":)" + at(400) +
          R"(,"op":"score","id":"s7-1.101","home":1,"away":0,"status":"live","clock":"23:00","period":"1H","match_length":90,"kickoff":1767225600})",
      R"({"at":)" + at(450) + R"(,"op":"score","id":"s7-1.303","status":"scheduled","postponed":true})",
      R"({"at":)" + at(500) + R"(,"op":"stats","id":"s7-1.101","corners":[3,1],"yellow_cards":[1,0]})",
      R"({"at":)" + at(550) + R"(,"op":"remove","id":"s7-1.303"})",
      R"({"at":)" + at(600) +
          R"(,"op":"score","id":"s7-1.101","home":2,"away":1,"status":"ended","clock":"90:00","period":"FT","match_length":90,"kickoff":1767225600,"ht":[1,0],"result":"completed"})",
      R"({"at":)" + at(650) + R"(,"op":"market","id":"404","market":7,"lines":{"s0.5":{"s":0,"o":{"11":[120,0]}}}})",
      R"({"at":)" + at(700) + R"(,"op":"market","id":"s7-1.101","market":1001,"lines":{}})",
      R"({"at":)" + at(750) +
          R"(,"op":"market","id":"s7-1.101","market":1001,"lines":{"s":{"s":0,"o":{"2001":[500,0],"2002":[100,1]}}}})",
      R"({"at":)" + at(800) + R"(,"op":"stats","id":"s7-1.101","shots":[10,4],"final":true})",
      R"({"at":)" + at(900) + R"(,"op":"event","id":"s7-1.202",)" + ev202 + "}",
  };
}

// Applies the lines in order, committing every `batch` records (0: once).
SnapshotPtr build(const std::vector<std::string>& lines, size_t batch = 0) {
  Engine e;
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(e.apply(test::rec(lines[i])), ApplyResult::Applied) << lines[i];
    if (batch && (i + 1) % batch == 0) e.commit();
  }
  e.commit();
  return e.current();
}

std::vector<std::string> with(std::vector<std::string> v, size_t i, const std::string& line) {
  v.at(i) = line;
  return v;
}

// --- one-field variants, made by editing a copy of the base snapshot

constexpr uint64_t kVariantEdit = ~0ull;  // newer than any batch: edits copy, never touch the base

using Edit = std::function<void(Snapshot&)>;

void entry(Snapshot& s, uint64_t number, const std::function<void(EventEntry&)>& f) {
  auto& slot = s.events.slot(number, kVariantEdit);
  ASSERT_NE(slot, nullptr) << number;
  slot = std::make_shared<EventEntry>(*slot);
  f(*slot);
}

void info(Snapshot& s, uint64_t number, const std::function<void(feed::EventObject&)>& f) {
  entry(s, number, [&](EventEntry& e) {
    auto o = std::make_shared<feed::EventObject>(*e.info);
    f(*o);
    feed::finalize_event_json(*o);
    e.info = std::move(o);
  });
}

// A copy of the market with its lines and outcomes editable.
MarketPtr copy_market(const Market& m, const std::function<void(Line*, Outcome*)>& f, uint32_t id = 0) {
  Line* lines;
  Outcome* outs;
  auto c = Market::make(id ? id : m.id, m.lines.size(), m.outcomes.size(), &lines, &outs);
  std::copy(m.lines.begin(), m.lines.end(), lines);
  std::copy(m.outcomes.begin(), m.outcomes.end(), outs);
  f(lines, outs);
  return c;
}

void market(Snapshot& s, uint64_t number, size_t index, const std::function<void(Line*, Outcome*)>& f) {
  entry(s, number, [&](EventEntry& e) { e.markets.at(index).ptr = copy_market(*e.markets.at(index), f); });
}

void score(Snapshot& s, uint64_t number, const std::function<void(ScoreState&)>& f) {
  entry(s, number, [&](EventEntry& e) {
    auto c = std::make_shared<ScoreState>(*e.score);
    f(*c);
    e.score = std::move(c);
  });
}

void at_end(Snapshot& s, const std::function<void(Line*, Outcome*)>& f) {
  score(s, 101, [&](ScoreState& sc) { sc.odds_at_end.at(0).ptr = copy_market(*sc.odds_at_end.at(0), f); });
}

void stats(Snapshot& s, const std::function<void(StatsState&)>& f) {
  entry(s, 101, [&](EventEntry& e) {
    auto c = std::make_shared<StatsState>(*e.stats);
    f(*c);
    e.stats = std::move(c);
  });
}

struct Variant {
  const char* field;
  Edit edit;
};

std::vector<Variant> variants() {
  const Variant fixed[] = {
      // snapshot
      {"clock", [](Snapshot& s) { ++s.clock; }},
      {"feed_clock", [](Snapshot& s) { ++s.feed_clock; }},
      {"last_live_at", [](Snapshot& s) { ++s.last_live_at; }},
      {"evicted", [](Snapshot& s) { ++s.evicted; }},
      {"listed_live", [](Snapshot& s) { ++s.listed_live; }},
      {"listed_prematch", [](Snapshot& s) { ++s.listed_prematch; }},
      {"markets count", [](Snapshot& s) { ++s.markets; }},
      {"outcomes count", [](Snapshot& s) { ++s.outcomes; }},
      {"sports: sport id", [](Snapshot& s) { s.sports.at(1).sport = 6; }},
      {"sports: live", [](Snapshot& s) { ++s.sports.at(0).live; }},
      {"sports: prematch", [](Snapshot& s) { ++s.sports.at(1).prematch; }},
      {"sports: one more",
       [](Snapshot& s) {
         s.sports.push_back({9, 1, 0});
       }},
      // event
      {"event missing", [](Snapshot& s) { s.events.erase(404, kVariantEdit); }},
      {"event key", [](Snapshot& s) { entry(s, 101, [](EventEntry& e) { e.key = "s7-101"; }); }},
      {"event updated_at", [](Snapshot& s) { entry(s, 202, [](EventEntry& e) { ++e.updated_at; }); }},
      {"event unlisted", [](Snapshot& s) { entry(s, 202, [](EventEntry& e) { e.info = nullptr; }); }},
      {"event info c absent", [](Snapshot& s) { info(s, 101, [](feed::EventObject& o) { o.c.reset(); }); }},
      {"event info c.id", [](Snapshot& s) { info(s, 101, [](feed::EventObject& o) { ++o.c->id; }); }},
      {"event info c.name", [](Snapshot& s) { info(s, 101, [](feed::EventObject& o) { o.c->name = "Wales"; }); }},
      {"event info c.source_sport",
       [](Snapshot& s) { info(s, 101, [](feed::EventObject& o) { ++o.c->source_sport; }); }},
      {"event info c.iso2", [](Snapshot& s) { info(s, 101, [](feed::EventObject& o) { o.c->iso2 = "GG"; }); }},
      {"event info t absent", [](Snapshot& s) { info(s, 101, [](feed::EventObject& o) { o.t.reset(); }); }},
      {"event info t.id", [](Snapshot& s) { info(s, 101, [](feed::EventObject& o) { ++o.t->id; }); }},
      {"event info t.name", [](Snapshot& s) { info(s, 101, [](feed::EventObject& o) { o.t->name = "Cup"; }); }},
      {"event info t.priority", [](Snapshot& s) { info(s, 101, [](feed::EventObject& o) { ++o.t->priority; }); }},
      {"event info g", [](Snapshot& s) { info(s, 101, [](feed::EventObject& o) { ++o.g; }); }},
      {"event info ts", [](Snapshot& s) { info(s, 101, [](feed::EventObject& o) { ++o.ts; }); }},
      {"event info h", [](Snapshot& s) { info(s, 101, [](feed::EventObject& o) { o.h = "Leeds U"; }); }},
      {"event info a", [](Snapshot& s) { info(s, 101, [](feed::EventObject& o) { o.a = "York C"; }); }},
      {"event info co", [](Snapshot& s) { info(s, 101, [](feed::EventObject& o) { ++o.co; }); }},
      {"event info map key",
       [](Snapshot& s) { info(s, 101, [](feed::EventObject& o) { o.map.at(0).key = "s7_l2.101"; }); }},
      {"event info map p", [](Snapshot& s) { info(s, 101, [](feed::EventObject& o) { o.map.at(0).p = 1; }); }},
      {"event info map entry", [](Snapshot& s) { info(s, 202, [](feed::EventObject& o) { o.map.clear(); }); }},
      {"event info s", [](Snapshot& s) { info(s, 101, [](feed::EventObject& o) { o.s = 1; }); }},
      {"event info ms", [](Snapshot& s) { info(s, 101, [](feed::EventObject& o) { o.ms = 11; }); }},
      {"event info ms absent", [](Snapshot& s) { info(s, 101, [](feed::EventObject& o) { o.ms.reset(); }); }},
      {"event info live", [](Snapshot& s) { info(s, 202, [](feed::EventObject& o) { o.live = true; }); }},
      {"event info sport", [](Snapshot& s) { info(s, 202, [](feed::EventObject& o) { o.sport = 6; }); }},
      // market, line, outcome (event 101: market 1001, lines s with 2001, 2002)
      {"market removed", [](Snapshot& s) { entry(s, 202, [](EventEntry& e) { e.markets.clear(); }); }},
      {"market id",
       [](Snapshot& s) {
         entry(s, 404, [](EventEntry& e) {
           e.markets.at(0).id = 8;
           e.markets.at(0).ptr = copy_market(
               *e.markets.at(0), [](Line*, Outcome*) {}, 8);
         });
       }},
      {"line key", [](Snapshot& s) { market(s, 101, 0, [](Line* l, Outcome*) { l[0].key = LineKey("s1"); }); }},
      {"line s", [](Snapshot& s) { market(s, 101, 0, [](Line* l, Outcome*) { l[0].suspended = 1; }); }},
      {"line ls", [](Snapshot& s) { market(s, 101, 0, [](Line* l, Outcome*) { ++l[0].ls; }); }},
      {"line outcome count", [](Snapshot& s) { market(s, 101, 0, [](Line* l, Outcome*) { l[0].count = 1; }); }},
      {"outcome id", [](Snapshot& s) { market(s, 101, 0, [](Line*, Outcome* o) { o[1].id = 2009; }); }},
      {"outcome price", [](Snapshot& s) { market(s, 101, 0, [](Line*, Outcome* o) { ++o[1].price; }); }},
      {"outcome flags", [](Snapshot& s) { market(s, 101, 0, [](Line*, Outcome* o) { o[1].flags = 0; }); }},
      {"outcome prev_price", [](Snapshot& s) { market(s, 101, 0, [](Line*, Outcome* o) { ++o[1].prev_price; }); }},
      {"outcome ts", [](Snapshot& s) { market(s, 101, 0, [](Line*, Outcome* o) { ++o[1].ts; }); }},
      // score: the last record
      {"score absent", [](Snapshot& s) { entry(s, 303, [](EventEntry& e) { e.score = nullptr; }); }},
      {"score ts", [](Snapshot& s) { score(s, 101, [](ScoreState& c) { ++c.ts; }); }},
      {"score home", [](Snapshot& s) { score(s, 101, [](ScoreState& c) { ++*c.last.home; }); }},
      {"score away", [](Snapshot& s) { score(s, 101, [](ScoreState& c) { ++*c.last.away; }); }},
      {"score home absent", [](Snapshot& s) { score(s, 101, [](ScoreState& c) { c.last.home.reset(); }); }},
      {"score status",
       [](Snapshot& s) { score(s, 101, [](ScoreState& c) { c.last.status = feed::ScoreStatus::Live; }); }},
      {"score clock", [](Snapshot& s) { score(s, 101, [](ScoreState& c) { c.last.clock = "90:01"; }); }},
      {"score clock absent", [](Snapshot& s) { score(s, 101, [](ScoreState& c) { c.last.clock.reset(); }); }},
      {"score period", [](Snapshot& s) { score(s, 101, [](ScoreState& c) { c.last.period = "ET"; }); }},
      {"score match_length", [](Snapshot& s) { score(s, 101, [](ScoreState& c) { c.last.match_length = 80; }); }},
      {"score ht", [](Snapshot& s) { score(s, 101, [](ScoreState& c) { c.last.ht = std::make_pair(0, 0); }); }},
      {"score ht absent", [](Snapshot& s) { score(s, 101, [](ScoreState& c) { c.last.ht.reset(); }); }},
      {"score kickoff", [](Snapshot& s) { score(s, 101, [](ScoreState& c) { ++*c.last.kickoff; }); }},
      {"score result",
       [](Snapshot& s) { score(s, 101, [](ScoreState& c) { c.last.result = feed::MatchResult::Abandoned; }); }},
      {"score postponed", [](Snapshot& s) { score(s, 303, [](ScoreState& c) { c.last.postponed = false; }); }},
      // score: timeline
      {"timeline at", [](Snapshot& s) { score(s, 101, [](ScoreState& c) { ++c.timeline.at(1).at; }); }},
      {"timeline home", [](Snapshot& s) { score(s, 101, [](ScoreState& c) { ++c.timeline.at(1).home; }); }},
      {"timeline away", [](Snapshot& s) { score(s, 101, [](ScoreState& c) { ++c.timeline.at(1).away; }); }},
      {"timeline clock", [](Snapshot& s) { score(s, 101, [](ScoreState& c) { c.timeline.at(1).clock = "24:00"; }); }},
      {"timeline point dropped",
       [](Snapshot& s) { score(s, 101, [](ScoreState& c) { c.timeline.erase(c.timeline.begin()); }); }},
      // score: settlement anchor
      {"ended", [](Snapshot& s) { score(s, 101, [](ScoreState& c) { c.ended = false; }); }},
      {"final score", [](Snapshot& s) { score(s, 101, [](ScoreState& c) { c.final_score = std::make_pair(2, 2); }); }},
      {"final score absent", [](Snapshot& s) { score(s, 101, [](ScoreState& c) { c.final_score.reset(); }); }},
      {"final result",
       [](Snapshot& s) { score(s, 101, [](ScoreState& c) { c.final_result = feed::MatchResult::Cancelled; }); }},
      {"final version", [](Snapshot& s) { score(s, 101, [](ScoreState& c) { ++c.final_version; }); }},
      {"final at", [](Snapshot& s) { score(s, 101, [](ScoreState& c) { ++c.final_at; }); }},
      {"odds at end: market dropped", [](Snapshot& s) { score(s, 101, [](ScoreState& c) { c.odds_at_end.clear(); }); }},
      {"odds at end: line s", [](Snapshot& s) { at_end(s, [](Line* l, Outcome*) { l[1].suspended = 0; }); }},
      {"odds at end: line ls", [](Snapshot& s) { at_end(s, [](Line* l, Outcome*) { ++l[2].ls; }); }},
      {"odds at end: outcome price", [](Snapshot& s) { at_end(s, [](Line*, Outcome* o) { ++o[0].price; }); }},
      {"odds at end: outcome flags", [](Snapshot& s) { at_end(s, [](Line*, Outcome* o) { o[2].flags = 0; }); }},
      {"odds at end: outcome prev_price", [](Snapshot& s) { at_end(s, [](Line*, Outcome* o) { ++o[0].prev_price; }); }},
      {"odds at end: outcome ts", [](Snapshot& s) { at_end(s, [](Line*, Outcome* o) { ++o[4].ts; }); }},
      // stats
      {"stats absent", [](Snapshot& s) { entry(s, 101, [](EventEntry& e) { e.stats = nullptr; }); }},
      {"stats ts", [](Snapshot& s) { stats(s, [](StatsState& c) { ++c.ts; }); }},
      {"stats final", [](Snapshot& s) { stats(s, [](StatsState& c) { c.final = false; }); }},
  };
  std::vector<Variant> v(std::begin(fixed), std::end(fixed));
  for (size_t i = 0; i < feed::kStatNames.size(); ++i) {
    // Each value: changed where present, added where absent.
    v.push_back({feed::kStatNames[i], [i](Snapshot& s) {
                   stats(s, [i](StatsState& c) {
                     if (c.values[i])
                       ++c.values[i]->second;
                     else
                       c.values[i] = std::make_pair(0, 0);
                   });
                 }});
  }
  v.push_back({"stats value absent", [](Snapshot& s) { stats(s, [](StatsState& c) { c.values[0].reset(); }); }});
  return v;
}

}  // namespace

// The base reaches what the variants edit; a variant of a field the base
// never filled would prove nothing.
TEST(StateDigest, BaseStateHasEveryPart) {
  SnapshotPtr s = build(base_feed());
  ASSERT_EQ(s->events.size(), 4u);
  const EventEntry* e = s->events.find(101);
  ASSERT_TRUE(e && e->info && e->score && e->stats);
  EXPECT_EQ(e->markets.size(), 1u);
  EXPECT_EQ(e->markets[0]->lines.size(), 1u);
  EXPECT_EQ(e->markets[0]->outcomes[1].flags, 1u);
  const ScoreState& sc = *e->score;
  EXPECT_TRUE(sc.ended);
  EXPECT_EQ(sc.timeline.size(), 3u);
  ASSERT_EQ(sc.odds_at_end.size(), 1u);
  EXPECT_EQ(sc.odds_at_end[0]->lines.size(), 3u);  // s, s2.5, the empty rung s3
  EXPECT_EQ(sc.odds_at_end[0]->outcomes[0].prev_price, 185);
  EXPECT_EQ(sc.odds_at_end[0]->outcomes[0].price, 190);
  ASSERT_TRUE(e->stats->values[0] && e->stats->values[1] && e->stats->values[4]);
  EXPECT_FALSE(e->stats->values[2]);
  EXPECT_TRUE(e->stats->final);
  const EventEntry* removed = s->events.find(303);
  ASSERT_TRUE(removed && !removed->info && removed->score);
  EXPECT_TRUE(removed->score->last.postponed);
  const EventEntry* odds_only = s->events.find(404);
  ASSERT_TRUE(odds_only && !odds_only->info);
  EXPECT_EQ(odds_only->key, "404");
  EXPECT_EQ(s->sports.size(), 2u);
  EXPECT_EQ(s->listed_live, 1u);
  EXPECT_EQ(s->listed_prematch, 1u);
  EXPECT_EQ(s->clock, T + 900);
  EXPECT_EQ(s->feed_clock, T + 900);
  EXPECT_EQ(s->last_live_at, T + 550);
}

// What the contract leaves out on purpose: the status counters derived from
// the events, the horizon (configuration) and seq do not change the digest.
TEST(StateDigest, DerivedCountersAndConfigurationAreNotInIt) {
  SnapshotPtr base = build(base_feed());
  const uint64_t base_digest = state_digest(*base);
  const std::function<void(Snapshot&)> edits[] = {
      [](Snapshot& s) { ++s.ended; },
      [](Snapshot& s) { ++s.ended_live; },
      [](Snapshot& s) { ++s.ended_prematch; },
      [](Snapshot& s) { s.bytes += 64; },
      [](Snapshot& s) { s.retain_ended_ms = 1000; },
      [](Snapshot& s) { ++s.seq; },
  };
  for (const auto& edit : edits) {
    Snapshot copy = *base;
    edit(copy);
    EXPECT_EQ(state_digest(copy), base_digest);
  }
}

TEST(StateDigest, EveryFieldChangesTheDigest) {
  SnapshotPtr base = build(base_feed());
  const uint64_t base_digest = state_digest(*base);
  const std::string base_dump = dump_state(*base);
  std::set<uint64_t> seen{base_digest};
  size_t n = 0;
  for (const Variant& v : variants()) {
    SCOPED_TRACE(v.field);
    Snapshot copy = *base;
    v.edit(copy);
    EXPECT_NE(state_digest(copy), base_digest);
    EXPECT_NE(test::first_diff(dump_state(copy), base_dump), "");
    // No two fields collide either: each variant is a state of its own.
    EXPECT_TRUE(seen.insert(state_digest(copy)).second);
    ++n;
  }
  EXPECT_GE(n, 85u);
  // The edits copied what they changed: the base is as it was.
  EXPECT_EQ(state_digest(*base), base_digest);
  EXPECT_EQ(dump_state(*base), base_dump);
}

// The same differences reached through the engine from feed records.
TEST(StateDigest, FeedVariantsOfSettlementInputsChangeTheDigest) {
  const auto base = base_feed();
  const SnapshotPtr b = build(base);
  struct FeedVariant {
    const char* field;
    const char* first_diff;  // the dump line where the difference shows first
    std::vector<std::string> feed;
  };
  const std::vector<FeedVariant> cases = {
      // Only the odds before full time differ; the market is pulled and
      // re-offered after it, so the current odds are the same.
      {"odds at end", "AL 101",
       with(
           base, 3,
           R"({"at":)" + at(200) +
               R"(,"op":"market","id":"s7-1.101","market":1001,"lines":{"s":{"s":0,"o":{"2001":[195,0],"2002":[340,0],"2003":[420,1]}},"s2.5":{"s":1,"o":{"2101":[190,0],"2102":[180,0]}},"s3":{"s":0,"o":{}}}})")},
      {"timeline clock", "P 101",
       with(
           base, 7,
           R"({"at":)" + at(400) +
               R"(,"op":"score","id":"s7-1.101","home":1,"away":0,"status":"live","clock":"24:00","period":"1H","match_length":90,"kickoff":1767225600})")},
      {"half-time score", "S 101",
       with(
           base, 11,
           R"({"at":)" + at(600) +
               R"(,"op":"score","id":"s7-1.101","home":2,"away":1,"status":"ended","clock":"90:00","period":"FT","match_length":90,"kickoff":1767225600,"ht":[0,0],"result":"completed"})")},
      {"final result", "S 101",
       with(
           base, 11,
           R"({"at":)" + at(600) +
               R"(,"op":"score","id":"s7-1.101","home":2,"away":1,"status":"ended","clock":"90:00","period":"FT","match_length":90,"kickoff":1767225600,"ht":[1,0],"result":"abandoned"})")},
      {"display id", "E 101", with(base, 0, std::string(base[0]).replace(base[0].find("s7-1.101"), 8, "s7-101"))},
      {"stats value", "T 101",
       with(base, 9, R"({"at":)" + at(500) + R"(,"op":"stats","id":"s7-1.101","corners":[3,2],"yellow_cards":[1,0]})")},
      {"event object", "E 202", with(base, 16, std::string(base[16]).replace(base[16].find("\"Ana\""), 5, "\"Ann\""))},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.field);
    SnapshotPtr v = build(c.feed);
    EXPECT_NE(state_digest(*v), state_digest(*b));
    const std::string d = test::first_diff(dump_state(*v), dump_state(*b));
    EXPECT_NE(d.find(std::string(": ") + c.first_diff + " "), std::string::npos) << d;
  }
}

TEST(StateDigest, SameContentInAnotherOrderOrBatchingGivesTheSameDigest) {
  const auto base = base_feed();
  const SnapshotPtr one_batch = build(base);
  const uint64_t want = state_digest(*one_batch);
  // Each event's records keep their order; events interleave differently;
  // the last listing change of a live event and the last record stay last.
  const std::vector<size_t> reordered = {2, 4, 12, 0, 1, 3, 5, 7, 9, 11, 13, 14, 15, 6, 8, 10, 16};
  std::vector<std::string> other_order;
  for (size_t i : reordered) other_order.push_back(base.at(i));
  const auto& other = other_order;
  ASSERT_EQ(other.size(), base.size());
  for (size_t batch : {0u, 1u, 2u, 3u, 5u}) {
    SCOPED_TRACE(batch);
    for (const auto* feed : {&base, &other}) {
      SnapshotPtr s = build(*feed, batch);
      EXPECT_EQ(state_digest(*s), want);
      EXPECT_EQ(test::first_diff(dump_state(*s), dump_state(*one_batch)), "");
      EXPECT_EQ(test::state_summary(*s), test::state_summary(*one_batch));
      // seq is the log position: the same records give the same seq, however batched.
      EXPECT_EQ(s->seq, one_batch->seq);
    }
  }
}

// The digest hashes the dump a piece at a time as it is written; it must
// equal the hash of the whole dump for a state whose dump takes many pieces.
TEST(StateDigest, LargeStateDigestIsTheHashOfItsWholeDump) {
  Engine e;
  for (int ev = 0; ev < 4000; ++ev)
    e.apply(test::market(T + ev, "s7-1." + std::to_string(100 + ev), 1001,
                         {{"s2.5", 0, {{2001, 185 + ev % 50, 0}, {2002, 190, 0}}}, {"s3.5", 1, {{2001, 250, 0}}}}));
  e.commit();
  const std::string d = dump_state(*e.current());
  ASSERT_GT(d.size(), 1'000'000u);  // several of its pieces
  EXPECT_EQ(state_digest(*e.current()), XXH3_64bits(d.data(), d.size()));
}

TEST(StateDigest, KnownStateHasAPinnedDigest) {
  SnapshotPtr s = build({
      R"({"at":1000,"op":"event","id":"s7-1.5","event":{"g":1,"ts":1767225600,"h":"A","a":"B","co":1,"map":{},"s":0,"live":true,"sport":1}})",
      R"({"at":2000,"op":"market","id":"s7-1.5","market":1001,"lines":{"s":{"s":0,"o":{"2001":[185,0],"2002":[340,1]}}}})",
      R"({"at":3000,"op":"score","id":"s7-1.5","home":1,"away":0,"status":"ended","clock":"90:00"})",
      R"({"at":4000,"op":"stats","id":"s7-1.5","corners":[4,2],"final":true})",
  });
  // The dump is pinned too, so a changed digest shows what changed.
  EXPECT_EQ(dump_state(*s),
            "oddsrelay-state 4\n"
            "snapshot clock=4000 feed_clock=4000 last_live_at=1000 evicted=0 listed_live=1 listed_prematch=0 "
            "markets=1 outcomes=2 events=1\n"
            "sports 1:1:0\n"
            "E 5 updated=4000 key=\"s7-1.5\" info={\"g\":1,\"ts\":1767225600,\"h\":\"A\",\"a\":\"B\",\"co\":1,"
            "\"map\":{},\"s\":0,\"live\":true,\"sport\":1}\n"
            "M 5 1001 id=1001 lines=1 outcomes=2\n"
            "L 5 1001 \"s\" s=0 ls=2000 n=2 2001:185:0:185:2000 2002:340:1:340:2000\n"
            "W 5 none\n"
            "S 5 ts=3000 status=ended home=1 away=0 clock=\"90:00\" period=null match_length=null ht=null "
            "kickoff=null result=none postponed=0\n"
            "P 5 at=3000 1:0 clock=\"90:00\"\n"
            "F 5 ended=1 score=1:0 result=completed version=1 at=3000 odds_at_end=1\n"
            "AM 5 1001 id=1001 lines=1 outcomes=2\n"
            "AL 5 1001 \"s\" s=0 ls=2000 n=2 2001:185:0:185:2000 2002:340:1:340:2000\n"
            "T 5 ts=4000 final=1 corners=4:2 yellow_cards=null red_cards=null free_kicks=null shots=null fouls=null\n");
  EXPECT_EQ(state_digest(*s), 0xa52fbe84255a047aull);
}

TEST(StateDigest, StringsAreOneEscapedToken) {
  // A clock holding a quote, a space and a newline stays inside its quotes
  // and on its line, so it cannot pass for the fields after it.
  auto feed = [](const std::string& clock) {
    return std::vector<std::string>{R"({"at":1,"op":"score","id":"5","status":"live","clock":")" + clock + R"("})"};
  };
  const std::string plain = dump_state(*build(feed("1")));
  const std::string tricky = dump_state(*build(feed(R"(1\" period=\"2\n)")));
  EXPECT_EQ(std::count(tricky.begin(), tricky.end(), '\n'), std::count(plain.begin(), plain.end(), '\n'));
  EXPECT_NE(tricky.find(R"( clock="1\" period=\"2\x0a" period=null )"), std::string::npos) << tricky;
}

}  // namespace oddsrelay
