// Counters described once (protocol/metrics/stat_table.h): one table writes a
// component's /v1/status fields and its /metrics families, checked byte for
// byte on a small stats struct; a family split by a label is written once
// with all its samples, even when other statistics stand between them.
#include "protocol/metrics/stat_table.h"

#include <gtest/gtest.h>

#include <string>

namespace oddsrelay::metrics {
namespace {

struct Stats {
  std::atomic<uint64_t> open{0}, served{0}, closed_a{0}, internal{0}, closed_b{0};
};

constexpr Series kClosed{"x_closes_total", Type::Counter, "Closes, by reason.", {"reason", "a"}};
constexpr Stat<Stats> kTable[] = {
    {"open", &Stats::open, {"x_open", Type::Gauge, "Open now."}},
    {"served", &Stats::served},
    {"closed_a", &Stats::closed_a, kClosed},
    {"internal", &Stats::internal},
    {"closed_b", &Stats::closed_b, {"x_closes_total", Type::Counter, {}, {"reason", "b"}}},
};

void fill(Stats& s) {
  s.open = 3;
  s.served = 7;
  s.closed_a = 1;
  s.internal = 9;
  s.closed_b = 2;
}

TEST(StatTable, StatusFieldsInTableOrder) {
  Stats s;
  fill(s);
  std::string out;
  json::StringSink sink(out);
  json::Writer w(sink);
  w.StartObject();
  write_status_fields<Stats>(w, s, kTable);
  w.EndObject();
  EXPECT_EQ(out, R"({"open":3,"served":7,"closed_a":1,"internal":9,"closed_b":2})");
}

TEST(StatTable, FamiliesOnceWithEverySampleAndOnlyTheExposedStats) {
  Stats s;
  fill(s);
  std::string out;
  TextWriter w(out);
  write_families<Stats>(w, s, kTable);
  EXPECT_EQ(out,
            "# HELP x_open Open now.\n"
            "# TYPE x_open gauge\n"
            "x_open 3\n"
            "# HELP x_closes_total Closes, by reason.\n"
            "# TYPE x_closes_total counter\n"
            "x_closes_total{reason=\"a\"} 1\n"
            "x_closes_total{reason=\"b\"} 2\n");
}

}  // namespace
}  // namespace oddsrelay::metrics
