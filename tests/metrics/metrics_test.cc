// The metrics module (protocol/metrics/): fixed-bucket histograms and counters
// that threads update without locks, and their exposition in the Prometheus
// text format, checked byte for byte on a small registry.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "protocol/metrics/data_path.h"
#include "protocol/metrics/instruments.h"
#include "protocol/metrics/registry.h"
#include "protocol/metrics/text_format.h"

namespace oddsrelay::metrics {
namespace {

std::string dbl(double v) {
  std::string s;
  append_double(s, v);
  return s;
}

TEST(Metrics, DoublesAsPrometheusClientsWriteThem) {
  EXPECT_EQ(dbl(0), "0");
  EXPECT_EQ(dbl(1), "1");
  EXPECT_EQ(dbl(2.5), "2.5");
  EXPECT_EQ(dbl(0.0001), "0.0001");
  EXPECT_EQ(dbl(0.00025), "0.00025");
  EXPECT_EQ(dbl(1e-5), "1e-05");
  EXPECT_EQ(dbl(2.5e-6), "2.5e-06");
  EXPECT_EQ(dbl(1795416745.589), "1795416745.589");
  EXPECT_EQ(dbl(1e21), "1e+21");
  EXPECT_EQ(dbl(-3.5), "-3.5");
  EXPECT_EQ(dbl(INFINITY), "+Inf");
  EXPECT_EQ(dbl(-INFINITY), "-Inf");
  EXPECT_EQ(dbl(NAN), "NaN");
}

TEST(Metrics, HistogramBucketsAreInclusiveAndCumulative) {
  Histogram h{1000, 5000, 20'000};  // 1 us, 5 us, 20 us
  for (uint64_t ns : {0, 999, 1000, 1001, 5000, 19'999, 20'001, 3'000'000}) h.observe_ns(ns);
  const Histogram::Reading r = h.read();
  ASSERT_EQ(r.cumulative.size(), 4u);
  EXPECT_EQ(r.cumulative[0], 3u);  // 0, 999, 1000 (le is inclusive)
  EXPECT_EQ(r.cumulative[1], 5u);  // + 1001, 5000
  EXPECT_EQ(r.cumulative[2], 6u);  // + 19999
  EXPECT_EQ(r.cumulative[3], 8u);  // +Inf: everything
  EXPECT_EQ(r.count, 8u);
  EXPECT_EQ(r.sum_ns, 0u + 999 + 1000 + 1001 + 5000 + 19'999 + 20'001 + 3'000'000);
}

// The exact text of a small registry: HELP and TYPE once per family, help
// and label values escaped, a histogram's buckets in seconds ending in +Inf
// with _sum and _count, collectors in the order they were added.
TEST(Metrics, ExpositionTextOfASmallRegistry) {
  Counter requests;
  requests.add();
  requests.add(41);
  Histogram latency{10'000, 250'000, 1'000'000};  // 10 us, 250 us, 1 ms
  latency.observe_ns(10'000);
  latency.observe_ns(300'000);
  latency.observe_ns(2'000'000'000);
  Registry reg;
  reg.add([&](TextWriter& w) {
    w.single("demo_requests_total", Type::Counter, "Requests seen.", requests.value());
    w.family("demo_temperature_celsius", Type::Gauge, "A gauge with a back\\slash\nand a newline in its help.");
    w.sample("demo_temperature_celsius", {{"room", "a \"quoted\" name"}, {"path", "c:\\x\ny"}}, -1.5);
    w.sample("demo_temperature_celsius", {{"room", "b"}, {"path", ""}}, int64_t{-7});
  });
  reg.add([&](TextWriter& w) {
    w.family("demo_latency_seconds", Type::Histogram, "Latency.");
    w.histogram("demo_latency_seconds", {{"stream", "pt-ws"}}, latency);
  });
  std::string out;
  reg.write(out);
  EXPECT_EQ(out,
            "# HELP demo_requests_total Requests seen.\n"
            "# TYPE demo_requests_total counter\n"
            "demo_requests_total 42\n"
            "# HELP demo_temperature_celsius A gauge with a back\\\\slash\\nand a newline in its help.\n"
            "# TYPE demo_temperature_celsius gauge\n"
            "demo_temperature_celsius{room=\"a \\\"quoted\\\" name\",path=\"c:\\\\x\\ny\"} -1.5\n"
            "demo_temperature_celsius{room=\"b\",path=\"\"} -7\n"
            "# HELP demo_latency_seconds Latency.\n"
            "# TYPE demo_latency_seconds histogram\n"
            "demo_latency_seconds_bucket{stream=\"pt-ws\",le=\"1e-05\"} 1\n"
            "demo_latency_seconds_bucket{stream=\"pt-ws\",le=\"0.00025\"} 1\n"
            "demo_latency_seconds_bucket{stream=\"pt-ws\",le=\"0.001\"} 2\n"
            "demo_latency_seconds_bucket{stream=\"pt-ws\",le=\"+Inf\"} 3\n"
            "demo_latency_seconds_sum{stream=\"pt-ws\"} 2.00031\n"
            "demo_latency_seconds_count{stream=\"pt-ws\"} 3\n");
}

TEST(Metrics, HistogramWithoutLabelsAndWithoutObservations) {
  Histogram h{1'000'000'000};
  std::string out;
  TextWriter w(out);
  w.histogram("x_seconds", {}, h);
  EXPECT_EQ(out, "x_seconds_bucket{le=\"1\"} 0\nx_seconds_bucket{le=\"+Inf\"} 0\nx_seconds_sum 0\nx_seconds_count 0\n");
}

// Threads observe at once; nothing is lost and a reading taken meanwhile is
// already consistent (cumulative, +Inf equal to the count).
TEST(Metrics, ConcurrentUpdatesAreAllCounted) {
  Histogram h{100, 10'000};
  Counter c;
  constexpr int kThreads = 4, kEach = 50'000;
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        h.observe_ns(static_cast<uint64_t>((i + t) % 3) * 5000);  // 0, 5000, 10000
        c.add();
      }
    });
  for (int i = 0; i < 200; ++i) {
    const Histogram::Reading r = h.read();
    ASSERT_LE(r.cumulative[0], r.cumulative[1]);
    ASSERT_LE(r.cumulative[1], r.cumulative[2]);
    ASSERT_EQ(r.cumulative[2], r.count);
  }
  for (auto& t : ts) t.join();
  const Histogram::Reading r = h.read();
  EXPECT_EQ(c.value(), uint64_t{kThreads} * kEach);
  EXPECT_EQ(r.count, uint64_t{kThreads} * kEach);
  EXPECT_EQ(r.cumulative[2], r.count);
  uint64_t zeros = 0, fives = 0, tens = 0;
  for (int t = 0; t < kThreads; ++t)
    for (int i = 0; i < kEach; ++i) {
      const int k = (i + t) % 3;
      (k == 0 ? zeros : k == 1 ? fives : tens) += 1;
    }
  EXPECT_EQ(r.cumulative[0], zeros);
  EXPECT_EQ(r.cumulative[1], zeros + fives + tens);  // 10000 is inclusive
  EXPECT_EQ(r.sum_ns, fives * 5000 + tens * 10'000);
}

// The relay's two hooks: every batch a turn noted is observed once when the
// turn had subscribers, none when it had not, and a batch without a start
// stamp (restored, or from a test) is never observed.
TEST(Metrics, DeliveryIsObservedPerBatchOfATurnWithSubscribers) {
  const uint64_t before = delivery().read().count;
  const int64_t t = steady_ns();
  turn_batch(t);
  turn_batch(t);
  turn_written(false);
  EXPECT_EQ(delivery().read().count, before);
  turn_written(true);  // the stamps of the last turn were forgotten
  EXPECT_EQ(delivery().read().count, before);
  turn_batch(t);
  turn_batch(0);
  turn_batch(t);
  turn_written(true);
  const Histogram::Reading r = delivery().read();
  EXPECT_EQ(r.count, before + 2);
  EXPECT_GT(r.sum_ns, 0u);
  // Another thread (another relay loop) has its own turn.
  turn_batch(t);
  std::thread([] { turn_written(true); }).join();
  EXPECT_EQ(delivery().read().count, before + 2);
  turn_written(true);
  EXPECT_EQ(delivery().read().count, before + 3);
}

TEST(Metrics, DataPathFamiliesAreNamedAndTyped) {
  std::string out;
  TextWriter w(out);
  write_data_path(w);
  EXPECT_NE(out.find("# TYPE oddsrelay_batch_apply_seconds histogram\n"), std::string::npos);
  EXPECT_NE(out.find("# TYPE oddsrelay_stream_delivery_seconds histogram\n"), std::string::npos);
  EXPECT_NE(out.find("oddsrelay_batch_apply_seconds_bucket{le=\"5e-06\"} "), std::string::npos);  // microseconds
  EXPECT_NE(out.find("oddsrelay_stream_delivery_seconds_bucket{le=\"+Inf\"} "), std::string::npos);
}

}  // namespace
}  // namespace oddsrelay::metrics
