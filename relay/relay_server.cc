// RelayServer (relay_server.h): the hub and the loops, wired to the engine's
// batches and the REST listener's upgraded sockets.
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include "relay/hub.h"
#include "relay/key_slots.h"
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
    threads_.emplace_back([loop = loops_[i].get(), i] {
      // Named so perf/relay can count the relay loops' CPU apart from the
      // rest of the process.
      const std::string name = "relay-" + std::to_string(i);
      pthread_setname_np(pthread_self(), name.c_str());
      loop->run();
    });
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
  TurnPtr t = hub_->encode(batch);
  if (!t) return;
  hub_seq_.store(t->seq, std::memory_order_release);
  for (auto& l : loops_) {
    while (l->turns.size_approx() >= kMaxSinkBacklog && running_.load(std::memory_order_relaxed)) {
      l->wake();
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    l->turns.enqueue(t);
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

void RelayServer::write_status(json::Writer& w) const {
  auto field = [&](const char* k, const std::atomic<uint64_t>& v) {
    w.Key(k);
    w.Uint64(v.load(std::memory_order_relaxed));
  };
  w.StartObject();
  field("pt_ws_connections", stats_.pt_connections);
  field("ws_connections", stats_.ws_connections);
  field("accepted", stats_.accepted);
  field("refused_key_limit", stats_.refused_limit);
  field("batches", stats_.batches);
  field("frames_encoded", stats_.frames_encoded);
  field("deliveries", stats_.deliveries);
  field("bytes_written", stats_.bytes_written);
  field("conflated", stats_.conflated);
  field("closed_slow", stats_.closed_slow);
  field("closed_heartbeat", stats_.closed_heartbeat);
  field("closed_protocol", stats_.closed_protocol);
  field("closed_stalled", stats_.closed_stalled);
  field("closed_soft_limit", stats_.closed_soft_limit);
  field("closed_restart", stats_.closed_restart);
  field("resumed", stats_.resumed);
  field("resume_refused", stats_.resume_refused);
  w.Key("threads");
  w.Uint(opts_.threads);
  w.Key("resume_window");
  w.StartObject();
  field("groups", stats_.window_groups);
  field("bytes", stats_.window_bytes);
  field("oldest_seq", stats_.window_oldest);
  w.EndObject();
  w.EndObject();
}

}  // namespace oddsrelay::relay
