// One connection to the bus and its JetStream context, shared by the
// publisher, the edge follower and oddsfeed: given the cluster's servers, it
// connects to the first it reaches in the background, fails over to any other
// and reconnects forever with a capped backoff, logs which server it is on,
// and says whether it is connected right now (part of an edge's
// upstream_ready). The few
// JetStream calls the cluster needs (stream state, create, read back one
// message, purge) are here so the rest never touches nats.c's structs.
#pragma once

#include <nats/nats.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "protocol/bus_contract.h"

namespace oddsrelay::bus {

struct StreamState {
  uint64_t msgs = 0, bytes = 0, first_seq = 0, last_seq = 0;
};

// How the streams are made when missing: the log stream's limits
// (--publish-max-age, --publish-max-bytes) and the copies the cluster keeps
// of both streams (--publish-replicas).
struct StreamSettings {
  int64_t max_age_s = 24 * 3600;
  int64_t max_bytes = int64_t{1} << 30;
  int replicas = 1;
};

// The settings of a stream that decide whether this node can use it as
// made: which subjects it takes, where it stores, how many copies.
struct StreamShape {
  std::vector<std::string> subjects;
  bool file_storage = true;
  int64_t replicas = 1;
};
// What differs between the stream wanted and the one found, one line
// ("" when nothing); `fatal` when the stream cannot carry this log at all
// (it does not take the subject written to).
std::string shape_differences(const std::string& name, const StreamShape& want, const StreamShape& have, bool& fatal);

// A message read back by its stream sequence.
struct StoredMsg {
  uint64_t seq = 0;
  std::string subject;
  std::string msg_id;  // Nats-Msg-Id, empty when absent
  std::string chunk;   // Odds-Chunk, empty when absent
  std::string data;
};

enum class Got { Ok, Missing, Failed };

class NatsLink {
 public:
  NatsLink() = default;
  ~NatsLink() { close(); }
  NatsLink(const NatsLink&) = delete;
  NatsLink& operator=(const NatsLink&) = delete;

  // Starts connecting to url's server and returns at once; false only when
  // the options cannot be built. `name` shows in the server's connz.
  bool open(const BusUrl& url, const std::string& name, std::string& err);
  // Waits up to timeout_ms for the connection; true when connected.
  bool wait_connected(int timeout_ms) const;
  void close();

  bool connected() const { return connected_.load(std::memory_order_acquire); }
  uint64_t disconnects() const { return disconnects_.load(std::memory_order_relaxed); }
  uint64_t reconnects() const { return reconnects_.load(std::memory_order_relaxed); }
  const BusUrl& url() const { return url_; }
  // The server of the list this node is connected to now (or was last).
  std::string server() const;
  natsConnection* nc() const { return nc_; }
  jsCtx* js() const { return js_; }

  // Synchronous JetStream calls, each bounded by the context's 2 s wait.
  // `wait_ms` > 0 bounds this one request tighter than the context's wait.
  Got stream_state(const std::string& stream, StreamState& out, std::string& err, int wait_ms = 0,
                   StreamShape* shape = nullptr);
  // Creates STREAM (the log, made as `r` says) and STREAM_SNAP if missing.
  // An existing stream is left as it is, but one made otherwise is
  // reported: false (err) when it cannot carry the log, a warning on
  // stderr and in stream_warning() when it has other storage or replicas.
  bool ensure_streams(const StreamSettings& r, std::string& err);
  std::string stream_warning() const;
  Got get_msg(const std::string& stream, uint64_t seq, StoredMsg& out, std::string& err);
  Got get_last(const std::string& stream, const std::string& subject, StoredMsg& out, std::string& err);
  // Removes every message of `stream` below sequence `seq` (> 1: the server
  // reads 1 as "everything").
  bool purge_below(const std::string& stream, uint64_t seq, std::string& err);

 private:
  void note_server(natsConnection* nc, const char* how);
  static void on_connected(natsConnection*, void* self);
  static void on_disconnected(natsConnection*, void* self);
  static void on_closed(natsConnection*, void* self);
  static void on_reconnected(natsConnection*, void* self);
  static int64_t reconnect_delay(natsConnection*, int attempts, void*);

  BusUrl url_;
  std::string name_;  // the log prefix: who this node is
  mutable std::mutex mu_;
  std::string server_;          // guarded by mu_
  std::string stream_warning_;  // guarded by mu_
  bool closed_ = false;         // guarded by mu_: nats.c delivered its last callback
  std::condition_variable closed_cv_;
  natsOptions* opts_ = nullptr;
  natsConnection* nc_ = nullptr;
  jsCtx* js_ = nullptr;
  std::atomic<bool> connected_{false};
  std::atomic<uint64_t> disconnects_{0}, reconnects_{0};
};

// "what failed: nats.c's last error" for messages.
std::string nats_error(const char* what, natsStatus s, jsErrCode jerr = static_cast<jsErrCode>(0));

}  // namespace oddsrelay::bus
