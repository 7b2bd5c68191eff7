// RelayServer (relay_server.h): the hub and the loops, wired to the engine's
// batches and the REST listener's upgraded sockets.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <string>
#include <thread>

#include "protocol/api/key_slots.h"
#include "protocol/named_thread.h"
#include "relay/close_reason.h"
#include "relay/hub.h"
#include "relay/relay_loop.h"

namespace oddsrelay::relay {

unsigned default_relay_threads() {
  const unsigned cores = std::thread::hardware_concurrency();
  return std::clamp(cores / 2, 1u, 16u);
}

RelayServer::RelayServer(RelayOptions opts, const SnapshotStore& store)
    : opts_(opts), store_(store), slots_(std::make_unique<KeySlots>()) {
  opts_.threads = std::max(opts_.threads, 1u);
}

RelayServer::~RelayServer() { stop(); }

void RelayServer::start() {
  // The state streams start from: whatever the engine holds when the relay
  // starts (after the journal replay), then every batch after it. The hub
  // and every loop start from the same snapshot.
  SnapshotPtr start = store_.load();
  hub_ = std::make_unique<Hub>(start, stats_);
  for (unsigned i = 0; i < opts_.threads; ++i)
    loops_.push_back(
        std::make_unique<RelayLoop>(opts_, start, stats_, *slots_, /*publishes_window=*/i == 0, &hub_seq_));
  running_ = true;
  for (size_t i = 0; i < loops_.size(); ++i) {
    // Named so perf/relay can count the relay loops' CPU apart from the
    // rest of the process.
    threads_.push_back(named_thread("relay-" + std::to_string(i), [loop = loops_[i].get()] { loop->run(); }));
  }
}

void RelayServer::stop() {
  running_ = false;
  if (threads_.empty()) return;
  for (auto& l : loops_) l->request_stop();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void RelayServer::on_batch(const BatchPtr& batch) {
  if (!hub_) return;
  SharedBatchPtr b = hub_->encode(batch);
  if (!b) return;
  hub_seq_.store(b->seq, std::memory_order_release);
  for (auto& l : loops_) {
    while (l->batches.size_approx() >= kMaxSinkBacklog && running_.load(std::memory_order_relaxed)) {
      l->wake();
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    l->batches.enqueue(b);
    l->wake();
  }
}

void RelayServer::adopt(rest::StreamTicket ticket, int fd, std::string pending) {
  RelayLoop* best = nullptr;
  uint32_t least = UINT32_MAX;
  for (auto& l : loops_) {
    const uint32_t n = l->load.load(std::memory_order_relaxed);
    if (n < least) {
      least = n;
      best = l.get();
    }
  }
  if (!best) {
    ::close(fd);
    return;
  }
  best->load.fetch_add(1, std::memory_order_relaxed);
  best->adoptions.enqueue(RelayLoop::Adoption{std::move(ticket), fd, std::move(pending)});
  best->wake();
}

namespace {

using metrics::Label;
using metrics::Series;
using metrics::Type;
using Stat = metrics::Stat<RelayStats>;

constexpr std::string_view kClosesHelp =
    "Streams the server closed, by reason (queue_limit, stalled, soft_limit: slow consumers; heartbeat; protocol).";
constexpr Series closes(std::string_view reason) {
  return {"oddsrelay_stream_closes_total", Type::Counter, kClosesHelp, {"reason", reason}};
}

constexpr Stat kAcceptStats[] = {
    {"pt_ws_connections",
     &RelayStats::pt_connections,
     {"oddsrelay_stream_subscribers", Type::Gauge, "Streams connected, by stream.", {"stream", "pt-ws"}}},
    {"ws_connections",
     &RelayStats::ws_connections,
     {"oddsrelay_stream_subscribers", Type::Gauge, {}, {"stream", "ws"}}},
    {"accepted",
     &RelayStats::accepted,
     {"oddsrelay_stream_accepted_total", Type::Counter, "Streams accepted (within their key's slots)."}},
    {"refused_key_limit", &RelayStats::refused_limit},  // oddsrelay_rate_limited_total{limit="stream_slots"}
    {"batches", &RelayStats::batches},
    {"frames_encoded", &RelayStats::frames_encoded},
    {"deliveries",
     &RelayStats::deliveries,
     {"oddsrelay_stream_frames_delivered_total", Type::Counter,
      "Frames queued to subscribers (one per frame per subscriber)."}},
    {"bytes_written",
     &RelayStats::bytes_written,
     {"oddsrelay_stream_written_bytes_total", Type::Counter, "Bytes written to stream sockets."}},
    {"deflate_negotiated", &RelayStats::deflate_negotiated},  // permessage-deflate (docs/architecture.md)
    {"frames_deflated", &RelayStats::frames_deflated},
    {"conflated",
     &RelayStats::conflated,
     {"oddsrelay_stream_frames_conflated_total", Type::Counter,
      "Queued frames replaced by a newer one of their channel while a write was in flight."}},
};
constexpr Stat kResumeStats[] = {
    {"resumed", &RelayStats::resumed},
    {"resume_refused", &RelayStats::resume_refused},
};

// The closed_* fields, from the close-reason table (close_reason.h): each
// reason with a status field of its own, a closes{reason} sample if exposed.
constexpr size_t kCloseStats = [] {
  size_t n = 0;
  for (const CloseInfo& r : kCloseTable) n += r.status != nullptr;
  return n;
}();

constexpr auto kRelayStats = [] {
  std::array<Stat, std::size(kAcceptStats) + kCloseStats + std::size(kResumeStats)> all{};
  size_t i = 0;
  for (const Stat& s : kAcceptStats) all[i++] = s;
  for (const CloseInfo& r : kCloseTable)
    if (r.status) all[i++] = Stat{r.status, r.counter, r.exposed ? closes(r.label) : Series{}};
  for (const Stat& s : kResumeStats) all[i++] = s;
  return all;
}();

constexpr Stat kResumeWindowStats[] = {
    {"groups", &RelayStats::window_groups},
    {"bytes", &RelayStats::window_bytes},
    {"oldest_seq", &RelayStats::window_oldest},
};

}  // namespace

metrics::StatTable<RelayStats> relay_stats() { return kRelayStats; }
metrics::StatTable<RelayStats> resume_window_stats() { return kResumeWindowStats; }

void RelayServer::write_status(json::Writer& w) const {
  w.StartObject();
  metrics::write_status_fields(w, stats_, relay_stats());
  w.Key("threads");
  w.Uint(opts_.threads);
  w.Key("resume_window");
  w.StartObject();
  metrics::write_status_fields(w, stats_, resume_window_stats());
  w.EndObject();
  w.EndObject();
}

}  // namespace oddsrelay::relay
