#include "protocol/metrics/data_path.h"

#include <chrono>
#include <vector>

namespace oddsrelay::metrics {

namespace {

constexpr uint64_t us(uint64_t n) { return n * 1000; }

// Per relay loop thread: the start stamps of the batches in the current turn.
thread_local std::vector<int64_t> turn_stamps;
constexpr size_t kMaxTurnStamps = 4096;  // a loop that never ends its turn cannot grow this

}  // namespace

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Histogram& batch_apply() {
  // A batch is up to 256 records at about a microsecond each.
  static Histogram h{us(5),    us(10),   us(25),   us(50),     us(100),    us(250),    us(500),
                     us(1000), us(2500), us(5000), us(10'000), us(25'000), us(50'000), us(100'000)};
  return h;
}

Histogram& delivery() {
  static Histogram h{us(50),      us(100),     us(250),     us(500),       us(1000),
                     us(2500),    us(5000),    us(10'000),  us(25'000),    us(50'000),
                     us(100'000), us(250'000), us(500'000), us(1'000'000), us(2'500'000)};
  return h;
}

void turn_batch(int64_t apply_start_ns) {
  if (apply_start_ns > 0 && turn_stamps.size() < kMaxTurnStamps) turn_stamps.push_back(apply_start_ns);
}

void turn_written(bool subscribers) {
  if (turn_stamps.empty()) return;
  if (subscribers) {
    const int64_t now = steady_ns();
    for (int64_t t : turn_stamps) delivery().observe_ns(now > t ? static_cast<uint64_t>(now - t) : 0);
  }
  turn_stamps.clear();
}

void write_data_path(TextWriter& w) {
  w.family("oddsrelay_batch_apply_seconds", Type::Histogram,
           "Engine time per batch: records taken off the queue to the batch sealed.");
  w.histogram("oddsrelay_batch_apply_seconds", {}, batch_apply());
  w.family("oddsrelay_stream_delivery_seconds", Type::Histogram,
           "A batch's start in the engine to the relay turn that wrote its frames to /pt-ws subscribers.");
  w.histogram("oddsrelay_stream_delivery_seconds", {}, delivery());
}

}  // namespace oddsrelay::metrics
