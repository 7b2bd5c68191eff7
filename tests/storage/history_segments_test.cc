// The odds history on disk (engine/storage/history_segments.h): a store
// rebuilt from the files answers what the one that wrote them did; a torn
// last frame is cut at any byte and the batches before it stay; a file goes
// once every event it holds has left at the retention horizon.
#include "engine/storage/history_segments.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "engine/core/engine.h"
#include "engine/history/history_answer.h"
#include "engine/history/history_store.h"
#include "engine/history/segment_codec.h"
#include "engine/history/varint.h"
#include "engine/storage/data_dir.h"
#include "engine/storage/history_recovery.h"
#include "engine/storage/log_writer.h"
#include "tests/test_util.h"

namespace oddsrelay::history {
namespace {

// Every event's whole answer (points, open, close, what is held), and the
// book at each of a few seqs: what the REST routes read of a store.
std::string answers(const HistoryStore& store, const std::set<uint64_t>& numbers, bool with_clock = true) {
  std::string out;
  for (uint64_t n : numbers)
    store.read(n, [&](const EventHistory* h, const HeldState& st) {
      json::append_object(out,
                          [&](json::Writer& w) { write_history_json(w, HistoryQuery{}, std::to_string(n), h, st); });
      if (with_clock) out += std::to_string(store.seq_at(1'000'000 + static_cast<int64_t>(n % 5000) * 100));
      out += '\n';
    });
  return out;
}

struct Fed {
  HistoryStore store{size_t{1} << 32};
  std::set<uint64_t> numbers;
  uint64_t points = 0;
};

// The simulator's records in batches of 1 to 97 through an engine; every
// batch goes to `fed.store` and to `files`.
void feed(Fed& fed, HistorySegments& files, size_t records, int64_t retain_ended_ms = 0) {
  Engine engine;
  if (retain_ended_ms) engine.set_retain_ended_ms(retain_ended_ms);
  const auto recs = test::sim_records(records);
  size_t in_batch = 0, size = 1;
  for (const auto& rec : recs) {
    fed.numbers.insert(rec.number);
    engine.apply(feed::Record(rec));
    if (++in_batch < size) continue;
    auto b = engine.commit();
    fed.store.apply(*b);
    files.add(b->first_seq, b->snapshot->seq, b->records, HistoryStore::evicted(*b));
    if (size % 3 == 0) files.flush();
    in_batch = 0;
    size = size * 7 % 97 + 1;
  }
  if (auto b = engine.commit()) {
    fed.store.apply(*b);
    files.add(b->first_seq, b->snapshot->seq, b->records, HistoryStore::evicted(*b));
  }
  files.flush();
}

std::string rebuilt(const std::string& dir, const std::set<uint64_t>& numbers, SegmentLoad* load = nullptr) {
  HistorySegments files(dir);
  HistoryStore store{size_t{1} << 32};
  const SegmentLoad l = files.load([&](const LoggedBatch& b) { store.apply(b, ""); });
  if (load) *load = l;
  return answers(store, numbers);
}

// The first line two answers() differ at, cut short: a failing comparison
// of every event's whole history would print megabytes.
std::string first_difference(const std::string& a, const std::string& b) {
  size_t at = 0;
  while (at < a.size() && at < b.size() && a[at] == b[at]) ++at;
  if (at == a.size() && at == b.size()) return "";
  const size_t line = a.rfind('\n', at == 0 ? 0 : at - 1);
  const size_t from = line == std::string::npos ? 0 : line + 1;
  return "at byte " + std::to_string(at) + ":\n  " + a.substr(from, at - from + 80) + "\nvs\n  " +
         b.substr(from, at - from + 80);
}

uint64_t file_size(const std::string& path) { return test::read_file(path).size(); }

TEST(HistorySegments, ARebuiltStoreAnswersAsTheOriginal) {
  test::TempDir dir;
  Fed fed;
  {
    HistorySegments files(dir.path(), 64 << 10);  // small files: several rotations
    std::string err;
    ASSERT_TRUE(files.start(1, 0, err)) << err;
    feed(fed, files, 30000);
  }
  const std::vector<uint64_t> names = list_data_dir(dir.path()).history;
  EXPECT_GT(names.size(), 3u);
  uint64_t bytes = 0;
  for (uint64_t first : names) bytes += file_size(history_segment_path(dir.path(), first));
  const uint64_t points = fed.store.state().points;
  ASSERT_GT(points, 10000u);
  std::printf("%llu points, %llu bytes on disk: %.2f bytes a point\n", static_cast<unsigned long long>(points),
              static_cast<unsigned long long>(bytes), static_cast<double>(bytes) / static_cast<double>(points));
  EXPECT_LE(bytes, points * 8);  // the bound
  SegmentLoad load;
  const std::string got = rebuilt(dir.path(), fed.numbers, &load);
  EXPECT_EQ(got, answers(fed.store, fed.numbers));
  EXPECT_FALSE(load.torn_tail);
  EXPECT_EQ(load.seq, fed.store.state().seq);
}

// The last frame cut at each of its bytes: the tail is cut off the file,
// and the store holds exactly the batches before that frame.
TEST(HistorySegments, ATornLastFrameIsCutAtEveryByte) {
  // Every cut rebuilds the store from the file: a sanitized build gives
  // it fewer records before the torn frame, and still cuts at every byte.
  const size_t n = test::kSanitized ? 500 : 2000;
  test::TempDir before_dir, dir;
  Fed before, fed;
  std::string err;
  {
    HistorySegments files(before_dir.path());
    ASSERT_TRUE(files.start(1, 0, err)) << err;
    feed(before, files, n);
  }
  const std::string whole = test::read_file(history_segment_path(before_dir.path(), 1));
  {
    // The same batches, then one more record in a frame of its own.
    HistorySegments files(dir.path());
    ASSERT_TRUE(files.start(1, 0, err)) << err;
    feed(fed, files, n);
    const std::vector<feed::Record> more = test::sim_records(n + 1);
    const uint64_t seq = fed.store.state().seq + 1;
    files.add(seq, seq, std::span<const feed::Record>(more).last(1), {});
    files.flush();
  }
  const std::string longer = test::read_file(history_segment_path(dir.path(), 1));
  const std::string want = answers(before.store, before.numbers);
  ASSERT_EQ(longer.substr(0, whole.size()), whole);
  ASSERT_GT(longer.size(), whole.size() + 10);
  for (size_t cut = whole.size() + 1; cut < longer.size(); ++cut) {
    test::TempDir d;
    const std::string p = history_segment_path(d.path(), 1);
    test::write_file(p, longer.substr(0, cut));
    SegmentLoad load;
    ASSERT_EQ(rebuilt(d.path(), before.numbers, &load), want) << "cut at " << cut;
    EXPECT_TRUE(load.torn_tail);
    EXPECT_EQ(load.cut_bytes, cut - whole.size());
    EXPECT_EQ(file_size(p), whole.size());
  }
}

// A closed file goes once every event it holds has been evicted; the one
// appended to stays.
TEST(HistorySegments, AFileGoesWithTheLastEventItHolds) {
  test::TempDir dir;
  std::string err;
  HistorySegments files(dir.path(), 1);  // every flush rotates
  ASSERT_TRUE(files.start(1, 0, err)) << err;
  const auto a = test::market(1000, "s7-101.5001", 1, {{"s", 0, {{1, 150, 0}}}});
  const auto b = test::market(1000, "s7-101.5002", 1, {{"s", 0, {{1, 150, 0}}}});
  files.add(1, 1, std::span<const feed::Record>(&a, 1), {});
  files.flush();  // history-1 holds a
  files.add(2, 2, std::span<const feed::Record>(&b, 1), {});
  files.flush();  // history-2 holds b
  files.add(3, 3, std::span<const feed::Record>(&b, 1), {});
  files.flush();  // history-3 holds b
  EXPECT_EQ(list_data_dir(dir.path()).history.size(), 4u);
  files.add(4, 4, {}, {b.number});
  files.flush();
  EXPECT_EQ(list_data_dir(dir.path()).history, (std::vector<uint64_t>{1, 5}));
  files.add(5, 5, {}, {a.number});
  files.flush();
  EXPECT_EQ(list_data_dir(dir.path()).history, (std::vector<uint64_t>{6}));
}

// The oldest file goes once its events left, while the next one still holds
// some of them: that file is read alone at a restart, so it must not lean
// on the deleted one (a layout numbered there, a quote as a delta from
// there). Event a names two layouts in file 1 and the second again, with a
// new price, in file 2 beside b; a leaves, file 1 goes, and the restart
// answers for b what a store fed the same batches does.
TEST(HistorySegments, AFileIsReadAloneOnceTheOneBeforeItWent) {
  test::TempDir dir;
  std::string err;
  const auto a1 = test::market(1000, "s7-101.5001", 1, {{"s", 0, {{1, 150, 0}}}});
  const auto a2 = test::market(1001, "s7-101.5001", 1, {{"s", 0, {{1, 150, 0}, {2, 210, 0}}}});
  const auto a3 = test::market(1002, "s7-101.5001", 1, {{"s", 0, {{1, 170, 0}, {2, 230, 0}}}});
  const auto b = test::market(1003, "s7-101.5002", 1, {{"s", 0, {{1, 190, 0}}}});
  const std::vector<LoggedBatch> batches = {
      {1, 2, {a1, a2}, {}},
      {3, 4, {a3, b}, {}},
      {5, 5, {}, {a1.number}},
  };
  HistoryStore fed{size_t{1} << 32};  // the batches the kept files hold
  {
    HistorySegments files(dir.path(), 1);  // every flush rotates
    ASSERT_TRUE(files.start(1, 0, err)) << err;
    for (const LoggedBatch& lb : batches) {
      if (lb.seq < 5) fed.apply(lb, "");
      files.add(lb.first_seq, lb.seq, lb.records, lb.evicted);
      files.flush();
    }
  }
  // a's first file went, and so did the one of its eviction (no records):
  // file 3 is read alone, and still holds a's records (see below).
  ASSERT_EQ(list_data_dir(dir.path()).history, (std::vector<uint64_t>{3, 6}));
  SegmentLoad load;
  std::string got;
  ASSERT_NO_THROW(got = rebuilt(dir.path(), {b.number}, &load));
  EXPECT_EQ(load.seq, 5u);  // file 6, empty, was started after the eviction at 5
  EXPECT_EQ(got, answers(fed, {b.number}));
  EXPECT_NE(got.find("190"), std::string::npos);
}

// A node's data dir as the server writes it: `records` simulator records
// through an engine in batches of `batch`, each batch to the journal, to
// `all.store` and, up to seq `history_until`, to the history's files.
// Returns the engine's last seq.
struct DirShape {
  size_t records = 20000, batch = 50;
  int64_t retain_ended_ms = 0;
  uint64_t segment_bytes = 64 << 10;
  int sync_ms = 0;
  uint64_t snapshot_records = 1000;
  bool hold = true;  // LogOptions::keep_after: the journal keeps what the files have not
  uint64_t history_until = UINT64_MAX;
};

uint64_t write_data_dir(const std::string& dir, const DirShape& shape, Fed& all) {
  const auto recs = test::sim_records(shape.records);
  Engine engine;
  if (shape.retain_ended_ms) engine.set_retain_ended_ms(shape.retain_ended_ms);
  const DataDirRecovery r = recover_data_dir(dir, engine);
  HistorySegments files(dir, shape.segment_bytes, shape.sync_ms);
  std::string err;
  EXPECT_TRUE(files.start(1, 0, err)) << err;
  LogOptions lo;
  lo.snapshot_records = shape.snapshot_records;
  if (shape.hold) lo.keep_after = [&] { return files.written_seq(); };
  LogWriter log(dir, lo);
  EXPECT_TRUE(log.open(r, err)) << err;
  for (size_t i = 0; i < recs.size(); ++i) {
    all.numbers.insert(recs[i].number);
    engine.apply(feed::Record(recs[i]));
    if (i % shape.batch != shape.batch - 1) continue;
    auto b = engine.commit();
    log.append(*b);
    all.store.apply(*b);
    if (b->snapshot->seq > shape.history_until) continue;
    files.add(b->first_seq, b->snapshot->seq, b->records, HistoryStore::evicted(*b));
    files.flush();
  }
  log.close();
  files.close();
  return engine.current()->seq;
}

// A file whose codec state (the layouts and names it has used) passes its
// bound starts the next one, however few bytes it has: a feed whose lines
// keep moving no longer grows the writer's memory until 64 MB of file. The
// files still rebuild every answer.
TEST(HistorySegments, AFileStartsAgainOnceItsLayoutsPassTheirBound) {
  test::TempDir dir;
  Fed fed;
  {
    HistorySegments files(dir.path(), HistorySegments::kDefaultSegmentBytes, 200, 256 << 10);
    std::string err;
    ASSERT_TRUE(files.start(1, 0, err)) << err;
    feed(fed, files, 30000);
  }
  const std::vector<uint64_t> names = list_data_dir(dir.path()).history;
  EXPECT_GT(names.size(), 2u);
  for (uint64_t first : names) EXPECT_LT(file_size(history_segment_path(dir.path(), first)), 1u << 20);
  SegmentLoad load;
  const std::string got = rebuilt(dir.path(), fed.numbers, &load);
  const std::string want = answers(fed.store, fed.numbers);
  EXPECT_TRUE(got == want) << first_difference(want, got);
  EXPECT_EQ(load.seq, fed.store.state().seq);
}

// A market that keeps moving its lines: more layouts and outcome names
// than the codec scans (past a few dozen it indexes them by hash), then
// back to each layout in another order. Every record reads back as it was
// written, and a layout the segment already holds is named by its number,
// not written again.
TEST(HistorySegments, AMarketMovingItsLinesGoesBackToEachLayoutByNumber) {
  const std::string id = "s7-101.5001";
  auto record = [&](int i, int64_t at, int price) {
    const std::string a = "s" + std::to_string(i) + ".5", b = "s" + std::to_string(i + 1) + ".5";
    return test::market(at, id, 18,
                        {{a, 0, {{12, price, 0}, {13, price + 7, 0}}},
                         {b, i % 2, {{12, price + 1, i % 3 == 0 ? 1 : 0}, {13, price + 9, 0}}}});
  };
  constexpr int kLayouts = 150;
  std::vector<feed::Record> recs;
  for (int i = 0; i < kLayouts; ++i) recs.push_back(record(i, 1000 + i, 150 + i));
  for (int k = 0; k < kLayouts; ++k) recs.push_back(record(k * 37 % kLayouts, 5000 + k, 300 + k % 11));
  SegmentCodec writer, reader;
  std::vector<uint8_t> out;
  std::vector<size_t> ends;
  for (size_t i = 0; i < recs.size(); ++i) {
    writer.put(i + 1, i + 1, std::span<const feed::Record>(&recs[i], 1), {}, out);
    ends.push_back(out.size());
  }
  const uint8_t* p = out.data();
  for (size_t i = 0; i < recs.size(); ++i) {
    LoggedBatch b;
    reader.get(p, b);
    ASSERT_EQ(static_cast<size_t>(p - out.data()), ends[i]) << "record " << i;
    ASSERT_EQ(b.records.size(), 1u);
    const auto& want = std::get<feed::MarketRec>(recs[i].body);
    const auto& got = std::get<feed::MarketRec>(b.records[0].body);
    ASSERT_EQ(got.lines.size(), want.lines.size()) << "record " << i;
    for (size_t l = 0; l < want.lines.size(); ++l) {
      EXPECT_EQ(got.lines[l].key, want.lines[l].key) << "record " << i;
      EXPECT_EQ(got.lines[l].suspended, want.lines[l].suspended) << "record " << i;
      EXPECT_EQ(got.lines[l].count, want.lines[l].count) << "record " << i;
    }
    ASSERT_EQ(got.outcomes.size(), want.outcomes.size()) << "record " << i;
    for (size_t o = 0; o < want.outcomes.size(); ++o) {
      EXPECT_EQ(got.outcomes[o].id, want.outcomes[o].id) << "record " << i << " outcome " << o;
      EXPECT_EQ(got.outcomes[o].price, want.outcomes[o].price) << "record " << i << " outcome " << o;
      EXPECT_EQ(got.outcomes[o].flags, want.outcomes[o].flags) << "record " << i << " outcome " << o;
    }
  }
  // The second pass names each layout by the number its first record gave
  // it (its place in the first pass), with no bytes following. A batch:
  // three varints, then the record's tag, `at`, event, market and layout.
  for (int k = 0; k < kLayouts; ++k) {
    const uint8_t* q = out.data() + ends[kLayouts + k - 1];
    for (int skip = 0; skip < 3; ++skip) get_varint(q);
    const uint64_t tag = get_varint(q);
    ASSERT_EQ(tag & 4, 0u) << "the event's id again at " << k;
    get_varint(q);  // at
    get_varint(q);  // event
    ASSERT_EQ(get_varint(q), 18u);
    const uint64_t layout = get_varint(q);
    EXPECT_EQ(layout, uint64_t(k * 37 % kLayouts) << 1) << "second pass, record " << k;
  }
}

// The codec keeps a quote per name (line key, outcome id), not per place
// in a layout: a market alternating between layouts that name an outcome
// twice (the same id twice in a line, or two lines with one key) and
// layouts sharing names with them, prices moving all along, reads back
// record for record, each place with its name's last quote in the record.
TEST(HistorySegments, QuotesFollowTheirNamesAcrossLayoutsThatRepeatAName) {
  // The feed's parser refuses a key twice in an object, so these records
  // are made as a source other than the parser could make them.
  const feed::Record base = test::market(1000, "s7-101.5002", 18, {{"s2.5", 0, {{12, 100, 0}}}});
  using Line = std::pair<std::string, std::vector<std::array<int, 3>>>;  // key, (id, price, flags)
  auto make = [&](int64_t at, const std::vector<Line>& lines, int s) {
    feed::Record r = base;
    r.at = at;
    feed::MarketRec m;
    m.market = 18;
    for (const auto& [key, outcomes] : lines) {
      m.lines.push_back(feed::LineIn{key, static_cast<uint8_t>(s), static_cast<uint32_t>(m.outcomes.size()),
                                     static_cast<uint32_t>(outcomes.size())});
      for (auto [oid, price, flags] : outcomes)
        m.outcomes.push_back(feed::OutcomeIn{static_cast<uint32_t>(oid), price, static_cast<uint32_t>(flags)});
    }
    r.body = std::move(m);
    return r;
  };
  auto record = [&](int i) {
    const int64_t at = 1000 + i;
    const int p = 150 + (i * 13) % 40;
    switch (i % 4) {
      case 0:  // distinct names
        return make(at, {{"s2.5", {{12, p, 0}, {13, p + 7, 0}}}, {"s3.5", {{12, p + 1, 0}}}}, 0);
      case 1:  // outcome 12 twice in one line
        return make(at, {{"s2.5", {{12, p + 2, 0}, {12, p + 3, 1}, {13, p, 0}}}}, i % 3 == 0);
      case 2:  // line "s3.5" twice
        return make(at, {{"s3.5", {{12, p + 4, 0}}}, {"s3.5", {{12, p + 5, 0}, {14, p, 0}}}}, 0);
      default:  // distinct again, sharing "s2.5"'s names with the others
        return make(at, {{"s2.5", {{13, p + 6, 0}, {12, p + 8, 2}}}}, 1);
    }
  };
  std::vector<feed::Record> recs;
  for (int i = 0; i < 400; ++i) recs.push_back(record(i * 7 % 9 == 0 ? i + 1 : i));
  SegmentCodec writer, reader;
  std::vector<uint8_t> out;
  for (size_t i = 0; i < recs.size(); i += 3) {
    const size_t n = std::min<size_t>(3, recs.size() - i);
    writer.put(i + 1, i + n, std::span<const feed::Record>(&recs[i], n), {}, out);
  }
  const uint8_t* p = out.data();
  size_t i = 0;
  while (p < out.data() + out.size()) {
    LoggedBatch b;
    reader.get(p, b);
    for (const feed::Record& r : b.records) {
      ASSERT_LT(i, recs.size());
      const auto& want = std::get<feed::MarketRec>(recs[i].body);
      const auto& got = std::get<feed::MarketRec>(r.body);
      ASSERT_EQ(got.outcomes.size(), want.outcomes.size()) << "record " << i;
      // A name's quote is its last place's in the record: the history
      // keys an outcome by its line key and id.
      std::map<std::pair<std::string, uint32_t>, feed::OutcomeIn> last;
      for (const feed::LineIn& l : want.lines)
        for (uint32_t o = l.first; o < l.first + l.count; ++o) last[{l.key, want.outcomes[o].id}] = want.outcomes[o];
      for (const feed::LineIn& l : want.lines)
        for (uint32_t o = l.first; o < l.first + l.count; ++o) {
          const feed::OutcomeIn& w = last[{l.key, want.outcomes[o].id}];
          EXPECT_EQ(got.outcomes[o].id, w.id) << "record " << i << " outcome " << o;
          EXPECT_EQ(got.outcomes[o].price, w.price) << "record " << i << " outcome " << o;
          EXPECT_EQ(got.outcomes[o].flags, w.flags) << "record " << i << " outcome " << o;
        }
      ++i;
    }
  }
  EXPECT_EQ(i, recs.size());
}

// A horizon of two feed seconds over a minute of simulator feed (matches
// end and leave all along) and files of 2 KB: files go before older ones,
// batches of evictions with them. After a restart the history holds exactly
// the events the state holds, each as the store that saw every batch does,
// and no file is kept for an event that left.
TEST(HistoryRecovery, ARestartHoldsTheEventsTheStateHoldsAndNoOther) {
  test::TempDir dir;
  Fed all;
  DirShape shape;
  shape.records = 60000;
  shape.batch = 40;
  shape.retain_ended_ms = 2000;
  shape.segment_bytes = 2 << 10;  // a file every few batches
  shape.sync_ms = 1 << 30;        // not synced: the test is about which files go
  shape.snapshot_records = 5000;
  const uint64_t seq = write_data_dir(dir.path(), shape, all);
  ASSERT_GT(all.numbers.size(), all.store.state().events + 10);  // many left
  Engine engine;
  engine.set_retain_ended_ms(2000);
  HistoryStore store{size_t{1} << 32};
  HistorySegments files(dir.path(), 2 << 10, 1 << 30);
  HistoryRecovery hr;
  const DataDirRecovery r = recover_with_history(dir.path(), engine, store, files, hr);
  ASSERT_TRUE(hr.rebuilt) << hr.why_seeded;
  EXPECT_EQ(r.seq, seq);
  EXPECT_GT(hr.forgotten, 0u);  // the case this test is for did happen
  EXPECT_EQ(store.state().events, all.store.state().events);
  // The book at a moment whose files went names the last record kept
  // before it (no event held has one in between), so the clock is left out.
  EXPECT_EQ(first_difference(answers(store, all.numbers, false), answers(all.store, all.numbers, false)), "");
  std::vector<uint64_t> held = files.held_events();
  for (uint64_t n : held) EXPECT_TRUE(engine.current()->events.find(n)) << n;
}

// A data dir whose history thread stopped at seq 7,000 while the journal
// went on to 20,000 (a kill while the history is behind): with the
// journal's hold (LogOptions::keep_after), the restart replays the records
// after 7,000 into the history from the journal, compaction
// notwithstanding, and holds every point of all 20,000; without it, the
// records in between are gone and the history is seeded, saying so.
HeldState restart_after_lag(bool hold, Fed& all, HistoryStore& store, HistoryRecovery& hr) {
  test::TempDir dir;
  DirShape shape;
  shape.hold = hold;
  shape.history_until = 7000;
  write_data_dir(dir.path(), shape, all);
  Engine engine;
  HistorySegments files(dir.path());
  const DataDirRecovery r = recover_with_history(dir.path(), engine, store, files, hr);
  EXPECT_EQ(r.seq, 20000u);
  // Without the hold the journal cannot reach the files' synced position,
  // so they are not even read.
  EXPECT_EQ(hr.load.seq, hold ? 7000u : 0u);
  return store.state();
}

TEST(HistoryRecovery, TheJournalHoldsWhatTheHistoryFilesDidNotReach) {
  Fed all;
  HistoryStore store{size_t{1} << 32};
  HistoryRecovery hr;
  const HeldState st = restart_after_lag(true, all, store, hr);
  EXPECT_TRUE(hr.rebuilt) << hr.why_seeded;
  EXPECT_EQ(hr.replayed, 13000u);
  EXPECT_EQ(st.held_from_seq, 0u);
  EXPECT_EQ(st.seq, 20000u);
  EXPECT_EQ(answers(store, all.numbers), answers(all.store, all.numbers));
}

TEST(HistoryRecovery, WithoutTheHoldTheGapIsSeededAndSaidSo) {
  Fed all;
  HistoryStore store{size_t{1} << 32};
  HistoryRecovery hr;
  const HeldState st = restart_after_lag(false, all, store, hr);
  EXPECT_FALSE(hr.rebuilt);
  EXPECT_NE(hr.why_seeded.find("no longer holds"), std::string::npos) << hr.why_seeded;
  EXPECT_EQ(st.held_from_seq, 20001u);
}

// A restart in two halves (history_recovery.h): with history-synced, the
// state is back before the files are read, and the journal keeps what the
// history holds nothing of yet; the files read after it make the same
// history as reading them first.
struct Restarted {
  Fed all;
  test::TempDir dir;
  Engine engine;
  HistoryStore store{size_t{1} << 32};
  std::unique_ptr<HistorySegments> files;
  std::unique_ptr<HistoryRestart> restart;
  DataDirRecovery r;
  // A dir whose history stopped at 7,000 of 20,000 records (synced at
  // every write), changed by `damage`, then the restart's first half.
  explicit Restarted(const std::function<void(const std::string&)>& damage = {}) {
    DirShape shape;
    shape.history_until = 7000;
    write_data_dir(dir.path(), shape, all);
    if (damage) damage(dir.path());
    files = std::make_unique<HistorySegments>(dir.path());
    restart = std::make_unique<HistoryRestart>(store, *files);
    r = restart->recover(dir.path(), engine);
  }
};

TEST(HistoryRestart, TheStateIsBackBeforeTheFilesAreRead) {
  Restarted t;
  EXPECT_EQ(t.r.seq, 20000u);
  ASSERT_TRUE(t.restart->pending());
  EXPECT_EQ(t.store.state().points, 0u);
  EXPECT_EQ(t.files->written_seq(), 0u);  // the journal's hold keeps everything meanwhile
  ASSERT_TRUE(t.restart->finish());
  EXPECT_FALSE(t.restart->pending());
  const HistoryRecovery& hr = t.restart->result();
  EXPECT_TRUE(hr.rebuilt) << hr.why_seeded;
  EXPECT_TRUE(hr.deferred);
  EXPECT_EQ(hr.load.seq, 7000u);
  EXPECT_EQ(hr.replayed, 13000u);
  EXPECT_EQ(t.files->written_seq(), 20000u);
  EXPECT_EQ(t.store.state().held_from_seq, 0u);
  EXPECT_EQ(first_difference(answers(t.store, t.all.numbers), answers(t.all.store, t.all.numbers)), "");
}

TEST(HistoryRestart, WithoutItsSyncedPositionTheFilesAreReadFirst) {
  for (const char* bytes : {"", "ORHSYN1\n0123456789abcdef"}) {  // missing; damaged
    Restarted t([&](const std::string& dir) {
      const std::string path = dir + "/history-synced";
      ASSERT_EQ(::unlink(path.c_str()), 0);
      if (*bytes) test::write_file(path, bytes);
    });
    EXPECT_FALSE(t.restart->pending()) << bytes;
    const HistoryRecovery& hr = t.restart->result();
    EXPECT_TRUE(hr.rebuilt) << hr.why_seeded;
    EXPECT_FALSE(hr.deferred);
    EXPECT_EQ(hr.load.seq, 7000u);
    EXPECT_EQ(hr.replayed, 13000u);
    EXPECT_EQ(first_difference(answers(t.store, t.all.numbers), answers(t.all.store, t.all.numbers)), "");
  }
}

// A node stopped while reading: the files are as they were, so the next
// start rebuilds the same history.
TEST(HistoryRestart, AStopWhileReadingLeavesTheFilesAsTheyWere) {
  Restarted t;
  const auto listing = [&] {
    std::string out;
    for (uint64_t first : list_data_dir(t.dir.path()).history)
      out += std::to_string(first) + ":" + test::read_file(history_segment_path(t.dir.path(), first)) + ";";
    return out;
  };
  const std::string before = listing();
  std::atomic<bool> stop{true};
  EXPECT_FALSE(t.restart->finish(&stop));
  EXPECT_EQ(t.store.state().points, 0u);
  t.files->close();
  EXPECT_TRUE(listing() == before) << "the files changed";
  Engine engine;
  HistoryStore store{size_t{1} << 32};
  HistorySegments files(t.dir.path());
  HistoryRecovery hr;
  recover_with_history(t.dir.path(), engine, store, files, hr);
  EXPECT_TRUE(hr.rebuilt) << hr.why_seeded;
  EXPECT_EQ(first_difference(answers(store, t.all.numbers), answers(t.all.store, t.all.numbers)), "");
}

// Files that lost batches their synced position covers (damaged since):
// the journal was kept only from that position, so the history is seeded
// from the recovered state and says why.
TEST(HistoryRestart, FilesEndingBeforeTheirSyncedPositionAreSeeded) {
  Restarted t([](const std::string& dir) {
    const uint64_t last = list_data_dir(dir).history.back();
    ASSERT_EQ(::truncate(history_segment_path(dir, last).c_str(), 16), 0);  // its header only
  });
  ASSERT_TRUE(t.restart->pending());
  ASSERT_TRUE(t.restart->finish());
  const HistoryRecovery& hr = t.restart->result();
  EXPECT_FALSE(hr.rebuilt);
  EXPECT_LT(hr.load.seq, 7000u);
  EXPECT_NE(hr.why_seeded.find("before the 7000 they were synced through"), std::string::npos) << hr.why_seeded;
  EXPECT_EQ(t.store.state().held_from_seq, 20001u);
}

// The snapshot the restart would start from (at or before the files' synced
// position) is damaged, and the journal was compacted past the older ones:
// the state starts from the newest snapshot instead of not at all, and the
// history from that state, saying why.
TEST(HistoryRestart, ADamagedSnapshotBeforeTheFilesEndStartsFromTheNewest) {
  uint64_t damaged = 0;
  Restarted t([&](const std::string& dir) {
    for (uint64_t seq : list_data_dir(dir).snapshots)
      if (seq <= 7000) damaged = seq;
    ASSERT_NE(damaged, 0u);
    const std::string path = snapshot_path(dir, damaged);
    std::string bytes = test::read_file(path);
    bytes[bytes.size() / 2] ^= 0x20;
    test::write_file(path, bytes);
  });
  EXPECT_EQ(t.r.seq, 20000u);
  EXPECT_TRUE(t.r.past_at_most);
  EXPECT_GT(t.r.snapshot_seq, 7000u);
  EXPECT_FALSE(t.restart->pending());
  const HistoryRecovery& hr = t.restart->result();
  EXPECT_FALSE(hr.rebuilt);
  EXPECT_NE(hr.why_seeded.find("no snapshot at or before position 7000 could be read"), std::string::npos)
      << hr.why_seeded;
  EXPECT_EQ(t.store.state().held_from_seq, 20001u);
}

// A history seeded at a restart (the journal no longer held what its files
// did not) writes the state it started from beside its files; the next
// restart seeds the store with it and reads the files after it, so what
// was recorded since the first restart is kept, not seeded away again.
TEST(HistoryRestart, ASeededHistoryIsReadBackAfterItsSeed) {
  test::TempDir dir;
  Fed all;
  DirShape shape;
  shape.hold = false;
  shape.history_until = 7000;
  write_data_dir(dir.path(), shape, all);
  HistoryStore live{size_t{1} << 32};  // the node's history after the first restart
  {
    Engine engine;
    HistorySegments files(dir.path());
    HistoryRecovery hr;
    const DataDirRecovery r = recover_with_history(dir.path(), engine, live, files, hr);
    ASSERT_FALSE(hr.rebuilt);
    ASSERT_EQ(list_data_dir(dir.path()).history_seeds, std::vector<uint64_t>{20000});
    // 5,000 more records, to the journal, the history and its files.
    std::string err;
    LogOptions lo;
    lo.keep_after = [&] { return files.written_seq(); };
    LogWriter log(dir.path(), lo);
    ASSERT_TRUE(log.open(r, err)) << err;
    const auto recs = test::sim_records(25000);
    for (size_t i = 20000; i < recs.size(); ++i) {
      all.numbers.insert(recs[i].number);
      engine.apply(feed::Record(recs[i]));
      if (i % 50 != 49) continue;
      auto b = engine.commit();
      log.append(*b);
      live.apply(*b);
      files.add(b->first_seq, b->snapshot->seq, b->records, HistoryStore::evicted(*b));
      files.flush();
    }
    log.close();
    files.close();
  }
  ASSERT_EQ(live.state().seq, 25000u);
  ASSERT_GT(live.state().points, 0u);
  Engine engine;
  HistoryStore store{size_t{1} << 32};
  HistorySegments files(dir.path());
  HistoryRecovery hr;
  recover_with_history(dir.path(), engine, store, files, hr);
  EXPECT_TRUE(hr.rebuilt) << hr.why_seeded;
  EXPECT_EQ(hr.load.base, 20000u);
  EXPECT_EQ(store.state().held_from_seq, 20001u);
  EXPECT_EQ(first_difference(answers(store, all.numbers), answers(live, all.numbers)), "");
  // Without its seed the files cannot be read: seeded again, and said so.
  files.close();
  ASSERT_EQ(::unlink(history_seed_path(dir.path(), 20000).c_str()), 0);
  Engine engine2;
  HistoryStore store2{size_t{1} << 32};
  HistorySegments files2(dir.path());
  recover_with_history(dir.path(), engine2, store2, files2, hr);
  EXPECT_FALSE(hr.rebuilt);
  EXPECT_NE(hr.why_seeded.find("their seed cannot be read"), std::string::npos) << hr.why_seeded;
  EXPECT_EQ(store2.state().held_from_seq, 25001u);
}

}  // namespace
}  // namespace oddsrelay::history
