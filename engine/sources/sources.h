// The two live inputs of the pipeline, each on its own thread (docs/architecture.md,
// step 1): the simulator paced to `rate` odds records per second, and a
// replay of a feed file paced by its `at` stamps. Sources only push records;
// they never touch engine state.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include "engine/core/pipeline.h"
#include "engine/sources/simulator.h"
#include "engine/sources/stop_signal.h"
#include "protocol/clock.h"

namespace oddsrelay {

// What a source reports to the progress line and /v1/status.
struct SourceStatus {
  std::atomic<uint64_t> records{0};    // pushed into the pipeline
  std::atomic<uint64_t> malformed{0};  // lines skipped as malformed
  std::atomic<uint64_t> unknown_ops{0};
  std::atomic<bool> done{false};  // a replay reached its end
  std::string error;              // set before done when it could not run
};

class Source {
 public:
  virtual ~Source() = default;
  virtual void start() = 0;
  virtual void stop() = 0;  // idempotent; joins the thread
  virtual std::string describe() const = 0;
  const SourceStatus& status() const { return status_; }

 protected:
  SourceStatus status_;
};

class SimSource : public Source {
 public:
  SimSource(const sim::SimOptions& opts, Pipeline& pipeline) : opts_(opts), pipeline_(pipeline) {}
  ~SimSource() override { stop(); }
  void start() override;
  void stop() override;
  std::string describe() const override;

 private:
  void run();
  sim::SimOptions opts_;
  Pipeline& pipeline_;
  StopSignal stop_;
  std::thread thread_;
};

class ReplaySource : public Source {
 public:
  // speed: factor of real time; 0 = as fast as the engine takes it ("max").
  ReplaySource(std::string path, double speed, Pipeline& pipeline)
      : path_(std::move(path)), speed_(speed), pipeline_(pipeline) {}
  ~ReplaySource() override { stop(); }
  void start() override;
  void stop() override;
  std::string describe() const override;

 private:
  void run();
  std::string path_;
  double speed_;
  Pipeline& pipeline_;
  StopSignal stop_;
  std::thread thread_;
};

// `--feed none`: no records at all; the server serves what its data dir
// holds (an edge waiting for its bus, an operator inspecting a log).
class NoSource : public Source {
 public:
  void start() override { status_.done = true; }
  void stop() override {}
  std::string describe() const override { return "none (only the data dir's state)"; }
};

}  // namespace oddsrelay
