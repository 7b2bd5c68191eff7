// oddsrelay::client: a /pt-ws client that keeps a verified replica of what
// its stream carries (docs/clients.md). It connects with the stream's
// filters, applies frames into a replica one INFO group at a time, resumes
// with resume=<epoch>:<seq> after any cut (full-jitter backoff, 0.5 s to
// 30 s), notices a half-open connection (stale: two ping intervals without
// a frame), and syncs again from a snapshot when its replica is found
// wrong (a gap, a refused resume, a bad frame, a digest mismatch). The
// state machine is stream_machine.h, the socket ws_connection.h; this file
// runs them on one thread of the client's own.
//
//   oddsrelay::client::Options o;
//   o.url = "http://127.0.0.1:8080", o.key = "KEY", o.verify = true;
//   o.on_group = [](const Group& g) { ... };   // on the client's thread
//   oddsrelay::client::Client c(o);
//   c.start();  ... c.view() from any thread ...  c.stop();
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "clients/cpp/stream_machine.h"

namespace oddsrelay::client {

struct Options {
  std::string url;  // http://HOST:PORT
  std::string key;
  std::string events, markets, sports;  // comma-separated filters; empty: none
  unsigned conflate_ms = 0;
  bool compress = false;                       // offer permessage-deflate
  bool verify = false;                         // verify=1: check each INFO's digest
  double ping_interval_s = 30;                 // the server's --ws-ping: stale after two without a frame
  std::function<void(const Event&)> on_event;  // state changes and resyncs
  std::function<void(const Group&)> on_group;  // each INFO group applied
  uint64_t seed = 0;                           // backoff's jitter; 0: from std::random_device
};

// The /pt-ws path and query for the options (without resume=).
std::string stream_target(const Options& o);

class Client {
 public:
  explicit Client(Options o);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Runs the connection loop on a thread of its own until stop().
  void start();
  // Runs it on the caller's thread until stop() (from another thread or a
  // signal-driven flag).
  void run();
  // The loop ends (the replica stays at its last INFO); joins the thread.
  void stop();

  // The replica at the last INFO applied: a copy, from any thread.
  View view() const { return machine_.view(); }
  // `f(const ReplicaState&)` under the replica's lock, without a copy.
  template <class F>
  void read(F&& f) const {
    machine_.read(std::forward<F>(f));
  }
  State state() const { return machine_.state(); }
  std::optional<uint64_t> seq() const { return machine_.seq(); }
  uint64_t groups() const { return machine_.groups(); }
  uint64_t resyncs() const { return machine_.resyncs(); }
  // The last connection error (for progress lines), if any.
  std::string last_error() const;

 private:
  bool sleep_for(double seconds);  // false if stopped meanwhile
  void follow_connection();

  Options o_;
  StreamMachine machine_;
  std::string host_, target_;
  uint16_t port_ = 80;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
  mutable std::mutex error_mu_;
  std::string error_;
  uint64_t rng_state_;
};

}  // namespace oddsrelay::client
