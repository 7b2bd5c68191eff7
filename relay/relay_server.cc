// RelayServer (relay_server.h): the hub and the loops, wired to the engine's
// batches and the REST listener's upgraded sockets.
#include "relay/relay_server.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include "protocol/api/key_slots.h"
#include "protocol/named_thread.h"
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

void RelayServer::adopt(api::StreamTicket ticket, int fd, std::string pending) {
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
