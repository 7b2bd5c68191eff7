// One connection to the NATS server and its JetStream context, shared by the
// publisher, the edge follower and oddsfeed: it connects in the background,
// reconnects forever with a capped backoff, and says whether it is connected
// right now (what /v1/status calls upstream_ready on an edge). The few
// JetStream calls the cluster needs (stream state, create, read back one
// message, purge) are here so the rest never touches nats.c's structs.
#pragma once

#include <nats/nats.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "protocol/bus_contract.h"

namespace oddsrelay::bus {

struct StreamState {
  uint64_t msgs = 0, bytes = 0, first_seq = 0, last_seq = 0;
};

// Limits of the log stream (--publish-max-age, --publish-max-bytes).
struct Retention {
  int64_t max_age_s = 24 * 3600;
  int64_t max_bytes = int64_t{1} << 30;
};

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
  natsConnection* nc() const { return nc_; }
  jsCtx* js() const { return js_; }

  // Synchronous JetStream calls, each bounded by the context's 5 s wait.
  Got stream_state(const std::string& stream, StreamState& out, std::string& err);
  // Creates STREAM (the log, bounded by `r`) and STREAM_SNAP if missing;
  // an existing stream is left as it is.
  bool ensure_streams(const Retention& r, std::string& err);
  Got get_msg(const std::string& stream, uint64_t seq, StoredMsg& out, std::string& err);
  Got get_last(const std::string& stream, const std::string& subject, StoredMsg& out, std::string& err);
  // Removes every message of `stream` below sequence `seq` (> 1: the server
  // reads 1 as "everything").
  bool purge_below(const std::string& stream, uint64_t seq, std::string& err);

 private:
  static void on_connected(natsConnection*, void* self);
  static void on_disconnected(natsConnection*, void* self);
  static void on_reconnected(natsConnection*, void* self);
  static int64_t reconnect_delay(natsConnection*, int attempts, void*);

  BusUrl url_;
  natsOptions* opts_ = nullptr;
  natsConnection* nc_ = nullptr;
  jsCtx* js_ = nullptr;
  std::atomic<bool> connected_{false};
  std::atomic<uint64_t> disconnects_{0}, reconnects_{0};
};

// "what failed: nats.c's last error" for messages.
std::string nats_error(const char* what, natsStatus s, jsErrCode jerr = static_cast<jsErrCode>(0));

}  // namespace oddsrelay::bus
