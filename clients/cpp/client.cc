// The client's connection loop (client.h).
#include "clients/cpp/client.h"

#include <chrono>
#include <random>

#include "clients/cpp/backoff.h"
#include "clients/cpp/ws_connection.h"

namespace oddsrelay::client {

namespace {

// A query value as Python's urlencode(safe=",:") writes it.
void append_query_value(std::string& out, std::string_view v) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (char ch : v) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
        c == '.' || c == '~' || c == ',' || c == ':') {
      out += ch;
    } else if (c == ' ') {
      out += '+';
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
}

}  // namespace

std::string stream_target(const Options& o) {
  std::string t = "/pt-ws?api_key=";
  append_query_value(t, o.key);
  t += "&protocol=v2";
  for (auto [name, v] : {std::pair{"events", &o.events}, {"markets", &o.markets}, {"sports", &o.sports}}) {
    if (v->empty()) continue;
    t += '&';
    t += name;
    t += '=';
    append_query_value(t, *v);
  }
  if (o.conflate_ms) t += "&conflate_ms=" + std::to_string(o.conflate_ms);
  if (o.verify) t += "&verify=1";
  return t;
}

Client::Client(Options o)
    : o_(std::move(o)),
      machine_(StreamMachine::Callbacks{o_.on_event, o_.on_group}),
      target_(stream_target(o_)),
      rng_state_(o_.seed ? o_.seed : (uint64_t{std::random_device{}()} << 32) ^ std::random_device{}()) {
  split_url(o_.url, host_, port_);
}

Client::~Client() { stop(); }

void Client::start() {
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

void Client::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

std::string Client::last_error() const {
  std::lock_guard lock(error_mu_);
  return error_;
}

bool Client::sleep_for(double seconds) {
  std::unique_lock lock(mu_);
  return !cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return stopping_.load(); });
}

void Client::run() {
  if (host_.empty()) {
    std::lock_guard lock(error_mu_);
    error_ = "not an http:// or ws:// URL: " + o_.url;
    return;
  }
  WsConnection conn;
  const auto stale_after =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(2 * o_.ping_interval_s));
  while (!stopping_) {
    if (!conn.is_open()) {
      if (auto attempt = machine_.begin_connect()) {
        // splitmix64: the jitter's uniform draw in [0, 1).
        uint64_t z = (rng_state_ += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        if (!sleep_for(backoff_delay(*attempt, static_cast<double>(z >> 11) * 0x1.0p-53))) break;
      }
      std::string err;
      if (!conn.open(host_, port_, target_ + machine_.resume_query(), o_.compress, std::chrono::seconds(10), err)) {
        std::lock_guard lock(error_mu_);
        error_ = err;
        continue;
      }
      machine_.connected();
    }
    const auto now = Clock::now(), stale_at = conn.last_frame() + stale_after;
    if (now >= stale_at) {
      machine_.on_stale();
      conn.close();
      continue;
    }
    const auto wait = std::min<Clock::duration>(stale_at - now, std::chrono::milliseconds(100));
    bool dropped = false;
    auto r = conn.read(std::chrono::ceil<std::chrono::milliseconds>(wait), [&](bool text, std::string_view m) {
      auto next = text ? machine_.on_message(m) : machine_.on_binary();
      dropped = next == StreamMachine::Next::kDrop;
      return !dropped;
    });
    if (dropped) {
      conn.close();
    } else if (r == WsConnection::Read::kClosed) {
      conn.close();
      machine_.on_cut(stopping_);
    }
  }
}

}  // namespace oddsrelay::client
