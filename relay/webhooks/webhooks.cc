#include "relay/webhooks/webhooks.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>

#include "engine/views/json_views.h"
#include "protocol/clock.h"
#include "protocol/hmac.h"
#include "protocol/named_thread.h"
#include "relay/webhooks/http_post.h"

namespace oddsrelay::relay {

namespace {

void write_final(json::Writer& w, const EventEntry& e) {
  const ScoreState& s = *e.score;
  w.Key("score");
  if (s.final_score) {
    w.StartObject();
    w.Key("home");
    w.Int(s.final_score->first);
    w.Key("away");
    w.Int(s.final_score->second);
    w.EndObject();
  } else {
    w.Null();
  }
  w.Key("result");
  w.String(s.final_result == feed::MatchResult::None ? "completed" : feed::result_name(s.final_result));
  w.Key("final_version");
  w.Uint(s.final_version);
  w.Key("settled_at");
  w.Int64(s.final_at);
}

}  // namespace

// One receiver: its queue, its thread, its retry clock.
class Webhooks::Endpoint {
 public:
  Endpoint(const api::WebhookConfig& cfg, bool sandbox, const WebhookOptions& o, WebhookStats& stats, SSL_CTX* tls)
      : cfg_(cfg), sandbox_(sandbox), o_(o), stats_(stats), tls_(cfg.tls ? tls : nullptr), thread_([this] { run(); }) {}
  ~Endpoint() {
    retire();
    thread_.join();
  }
  uint32_t events() const { return cfg_.events; }

  // No longer configured (keys reload): what is queued is counted as dropped
  // and the thread ends after the POST in flight, if any.
  void retire() {
    {
      std::lock_guard lk(mu_);
      if (!stop_) stats_.dropped.fetch_add(fifo_.size() + odds_.size(), std::memory_order_relaxed);
      stop_ = true;
      fifo_.clear();
      odds_.clear();
      odds_order_.clear();
    }
    cv_.notify_all();
  }
  bool finished() const { return finished_.load(std::memory_order_acquire); }

  void push(Note n) {
    std::lock_guard lk(mu_);
    if (n.odds) {
      auto [it, fresh] = odds_.try_emplace(n.event);
      if (!fresh)
        stats_.coalesced.fetch_add(1, std::memory_order_relaxed);
      else
        odds_order_.push_back(n.event);
      it->second = std::move(n);
      // A receiver that stays down must not make this one map per event
      // ever seen: the oldest event's update gives way.
      while (odds_.size() > o_.max_queue && !odds_order_.empty()) {
        const uint64_t ev = odds_order_.front();
        odds_order_.pop_front();
        if (odds_.erase(ev)) stats_.dropped.fetch_add(1, std::memory_order_relaxed);
      }
    } else {
      if (fifo_.size() >= o_.max_queue) {
        // Non-critical callbacks give way first; when every one is critical
        // the oldest goes (counted), so the queue has a bound either way.
        auto victim = std::find_if(fifo_.begin(), fifo_.end(), [](const Note& q) { return !q.critical; });
        fifo_.erase(victim != fifo_.end() ? victim : fifo_.begin());
        stats_.dropped.fetch_add(1, std::memory_order_relaxed);
      }
      fifo_.push_back(std::move(n));
    }
    cv_.notify_one();
  }

 private:
  bool take(Note& n) {
    if (!fifo_.empty()) {
      n = std::move(fifo_.front());
      fifo_.pop_front();
      return true;
    }
    while (!odds_order_.empty()) {
      uint64_t ev = odds_order_.front();
      odds_order_.pop_front();
      auto it = odds_.find(ev);
      if (it == odds_.end()) continue;
      n = std::move(it->second);
      odds_.erase(it);
      return true;
    }
    return false;
  }

  std::string body_of(const Note& n) const {
    std::string b;
    json::StringSink sink(b);
    json::Writer w(sink);
    w.StartObject();
    w.Key("event");
    json::str(w, n.kind);
    if (sandbox_) {
      w.Key("sandbox");
      w.Bool(true);
    }
    w.Key("ts");
    w.Int64(wall_ms());
    w.Key("at");
    w.Int64(n.at);
    w.Key("data");
    w.RawValue(n.data.data(), n.data.size(), rapidjson::kObjectType);
    w.EndObject();
    return b;
  }

  void run() {
    deliver();
    finished_.store(true, std::memory_order_release);
  }

  void deliver() {
    std::unique_lock lk(mu_);
    for (;;) {
      cv_.wait(lk, [&] { return stop_ || !fifo_.empty() || !odds_order_.empty(); });
      if (stop_) return;
      Note n;
      if (!take(n)) continue;
      const int limit = n.critical ? o_.max_attempts : o_.max_attempts_other;
      int backoff = o_.backoff_first_ms;
      for (int attempt = 1;; ++attempt) {
        lk.unlock();
        const std::string body = body_of(n);
        std::string headers =
            "X-Webhook-Event: " + n.kind + "\r\nX-Signature: " + hmac_sha256_hex(cfg_.secret, body) + "\r\n";
        PostResult r = cfg_.tls && !tls_
                           ? PostResult{0, "no TLS context"}
                           : http_post(cfg_.host, cfg_.port, cfg_.path, body, headers, o_.timeout_ms, tls_);
        lk.lock();
        if (r.status >= 200 && r.status < 300) {
          stats_.delivered.fetch_add(1, std::memory_order_relaxed);
          break;
        }
        stats_.failed_attempts.fetch_add(1, std::memory_order_relaxed);
        // A newer odds_update for this event supersedes the one that failed.
        if (n.odds && odds_.count(n.event)) {
          stats_.coalesced.fetch_add(1, std::memory_order_relaxed);
          break;
        }
        if (attempt >= limit) {
          stats_.dropped.fetch_add(1, std::memory_order_relaxed);
          break;
        }
        if (cv_.wait_for(lk, std::chrono::milliseconds(backoff), [&] { return stop_; })) return;
        backoff = std::min(backoff * 2, o_.backoff_max_ms);
      }
    }
  }

  api::WebhookConfig cfg_;
  bool sandbox_;
  const WebhookOptions& o_;
  WebhookStats& stats_;
  SSL_CTX* tls_;  // null: plain http://
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::deque<Note> fifo_;
  std::unordered_map<uint64_t, Note> odds_;
  std::deque<uint64_t> odds_order_;
  std::atomic<bool> finished_{false};
  std::thread thread_;  // last: started once everything above exists
};

Webhooks::Webhooks(WebhookOptions opts, const Published<api::KeyStore>& keys) : opts_(opts), keys_(keys) {}

// Made at the first https:// endpoint, not at start-up: loading the system's
// CA certificates takes about 15 ms, which every start paid (a replay, each
// test's server) for endpoints it mostly never has. --webhook-ca is checked
// at start-up (tools/oddsrelay/main.cc), so what can fail here is OpenSSL
// itself; then https endpoints fail every attempt, never sent in the clear.
SSL_CTX* Webhooks::tls_context() {
  if (!tls_ && tls_error_.empty()) {
    tls_ = TlsClientContext::create(opts_.ca_file, tls_error_);
    if (!tls_)
      std::fprintf(stderr, "oddsrelay: webhooks: %s: https endpoints are not delivered to\n", tls_error_.c_str());
  }
  return tls_ ? tls_->get() : nullptr;
}

Webhooks::~Webhooks() { stop(); }

void Webhooks::start() {
  running_ = true;
  dispatcher_ = named_thread("webhooks", [this] { dispatch(); });
}

void Webhooks::stop() {
  if (!dispatcher_.joinable()) return;
  stopping_ = true;
  batches_.enqueue(nullptr);  // wakes the dispatcher
  dispatcher_.join();
  endpoints_.clear();
  retired_.clear();
}

// With no webhook configured (most servers) the dispatcher takes no batch,
// so a batch costs no wake of its thread. Nothing is lost by it: a
// notification is made from its own batch alone (EventChange::ended says
// an end is the first), and an endpoint still held (a reload just dropped
// its key) keeps the batches coming until the dispatcher retires it.
bool Webhooks::wanted() {
  auto keys = keys_.load();
  if (keys != hook_keys_) {
    hook_keys_ = keys;
    any_hook_ = false;
    keys->for_each([&](const api::ApiKey& k) { any_hook_ = any_hook_ || (k.enabled && k.webhook); });
  }
  return any_hook_ || stats_.endpoints.load(std::memory_order_relaxed) != 0;
}

void Webhooks::on_batch(const BatchPtr& batch) {
  if (stopping_.load(std::memory_order_relaxed)) return;
  if (!wanted()) return;
  taken_.fetch_add(1, std::memory_order_relaxed);
  // Bounded backlog (pipeline.h): the dispatcher does no I/O, so waiting
  // here means it is starved of CPU, not stuck on a receiver.
  while (backlog_.full() && running_.load(std::memory_order_relaxed) && !stopping_.load(std::memory_order_relaxed))
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  backlog_.added(*batch);
  batches_.enqueue(batch);
}

std::string Webhooks::endpoint_id(const api::ApiKey& key) {
  const api::WebhookConfig& c = *key.webhook;
  return c.url + '\n' + c.secret + (key.sandbox ? "\ns" : "\n") + std::to_string(c.events);
}

Webhooks::Endpoint& Webhooks::endpoint_for(const api::ApiKey& key, std::set<std::string>* live) {
  const api::WebhookConfig& c = *key.webhook;
  std::string id = endpoint_id(key);
  auto& slot = endpoints_[id];
  if (!slot) {
    slot = std::make_unique<Endpoint>(c, key.sandbox, opts_, stats_, c.tls ? tls_context() : nullptr);
    stats_.endpoints.store(endpoints_.size(), std::memory_order_relaxed);
  }
  if (live) live->insert(std::move(id));
  return *slot;
}

void Webhooks::retire_unused(const std::set<std::string>& live) {
  for (auto it = endpoints_.begin(); it != endpoints_.end();) {
    if (live.count(it->first)) {
      ++it;
      continue;
    }
    it->second->retire();
    retired_.push_back(std::move(it->second));
    it = endpoints_.erase(it);
  }
  stats_.endpoints.store(endpoints_.size(), std::memory_order_relaxed);
}

void Webhooks::dispatch() {
  BatchPtr b;
  std::shared_ptr<const api::KeyStore> last_keys;
  for (;;) {
    batches_.wait_dequeue(b);
    if (b) backlog_.taken(*b);
    if (stopping_ || !b) return;
    auto keys = keys_.load();
    const bool reloaded = keys != last_keys;  // then endpoints no key uses any more go
    std::vector<Endpoint*> targets;
    std::set<std::string> live;
    keys->for_each([&](const api::ApiKey& k) {
      if (k.enabled && k.webhook) targets.push_back(&endpoint_for(k, reloaded ? &live : nullptr));
    });
    if (reloaded) {
      retire_unused(live);
      last_keys = keys;
    }
    std::erase_if(retired_, [](const std::unique_ptr<Endpoint>& e) { return e->finished(); });
    if (targets.empty()) continue;
    int64_t at = 0;
    for (const auto& r : b->records) at = std::max(at, r.at);
    const Snapshot& s = *b->snapshot;
    for (const EventChange& ch : b->changes) {
      const EventEntry* e = s.events.find(ch.number);
      if (!e) continue;
      auto make = [&](const char* kind, uint32_t mask, bool critical, bool odds, auto&& body) {
        Note n;
        n.event = ch.number;
        n.kind = kind;
        n.critical = critical;
        n.odds = odds;
        n.at = at;
        json::StringSink sink(n.data);
        json::Writer w(sink);
        w.StartObject();
        w.Key("event_id");
        json::str(w, e->key);
        w.Key("sport");
        w.Int(ch.sport);
        body(w);
        w.EndObject();
        for (Endpoint* t : targets)
          if (t->events() & mask) t->push(n);
      };
      if (ch.bits & kOddsChanged)
        make("odds_update", api::kHookOdds, false, true, [&](json::Writer& w) {
          w.Key("markets");
          w.StartObject();
          for (uint32_t id : b->markets_of(ch)) {
            json::key(w, std::to_string(id));
            if (const Market* m = e->market(id))
              views::write_market(w, *m, views::OddsForm::Get);
            else
              w.Null();
          }
          w.EndObject();
        });
      if ((ch.bits & kScoreChanged) && e->score)
        make("score_update", api::kHookScore, false, false, [&](json::Writer& w) {
          w.Key("score");
          views::write_score(w, *e);
        });
      if ((ch.bits & kFinalChanged) && e->score) {
        if (ch.ended)  // the first final; a correction is a settlement change only
          make("event_ended", api::kHookEnded, true, false, [&](json::Writer& w) { write_final(w, *e); });
        make("settlement_changed", api::kHookSettlement, true, false, [&](json::Writer& w) { write_final(w, *e); });
      }
    }
  }
}

namespace {

constexpr metrics::Stat<WebhookStats> kWebhookStats[] = {
    {"endpoints", &WebhookStats::endpoints},
    {"delivered", &WebhookStats::delivered},
    {"failed_attempts", &WebhookStats::failed_attempts},
    {"dropped", &WebhookStats::dropped},
    {"coalesced", &WebhookStats::coalesced},
};

}  // namespace

metrics::StatTable<WebhookStats> webhook_stats() { return kWebhookStats; }

void Webhooks::write_status(json::Writer& w) const {
  w.StartObject();
  metrics::write_status_fields(w, stats_, webhook_stats());
  w.EndObject();
}

}  // namespace oddsrelay::relay
