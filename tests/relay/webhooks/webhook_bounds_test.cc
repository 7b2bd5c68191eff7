// Webhook queues have bounds that hold while a receiver stays down: at most
// max_queue queued callbacks per endpoint (critical ones too: the oldest
// goes, counted as dropped) and at most max_queue coalesced odds_update
// events; the endpoint of a key removed by a keys reload is shut down; and
// with no webhook configured the dispatcher is handed no batch at all.
// The receiver is a closed loopback port, and the first backoff is long, so
// once the first callback has failed the endpoint's thread holds it and
// everything after it waits in the queues.
#include <gtest/gtest.h>
#include <unistd.h>

#include "relay/webhooks/webhooks.h"
#include "tests/test_util.h"

namespace oddsrelay::relay {
namespace {

using test::market;

// Waits (bounded) until `pred` holds; the assertion after it says what never came.
template <class P>
void wait_for(P pred) {
  for (int i = 0; i < 2000 && !pred(); ++i) usleep(5000);
}

std::string hook_key(const char* events) {
  return std::string(R"({"keys":[{"key":"k","webhook":{"url":"http://127.0.0.1:1/h","secret":"s","events":[)") +
         events + "]}}]}";
}

WebhookOptions slow_options() {
  WebhookOptions o;
  o.max_queue = 10;
  o.backoff_first_ms = 600'000;  // the first failure parks the endpoint's thread
  o.max_attempts = 2;
  o.max_attempts_other = 2;
  return o;
}

TEST(WebhookBounds, CriticalQueueHasABoundAndOldestGoes) {
  Published<api::KeyStore> keys(api::KeyStore::parse(hook_key(R"("event_ended")")));
  Webhooks hooks(slow_options(), keys);
  hooks.start();
  Engine e;
  constexpr int kEvents = 30;
  for (int i = 1; i <= kEvents; ++i) {
    e.apply(test::rec("{\"at\":" + std::to_string(i) + ",\"op\":\"score\",\"id\":\"" + std::to_string(i) +
                      "\",\"home\":1,\"away\":0,\"status\":\"ended\"}"));
    hooks.on_batch(e.commit());
    if (i == 1) {
      wait_for([&] { return hooks.stats().failed_attempts.load() == 1; });
      ASSERT_EQ(hooks.stats().failed_attempts.load(), 1u);
    }
  }
  // 29 more event_ended callbacks behind the one held: ten queued, the
  // other 19 dropped, oldest first.
  wait_for([&] { return hooks.stats().dropped.load() >= kEvents - 11; });
  EXPECT_EQ(hooks.stats().dropped.load(), static_cast<uint64_t>(kEvents - 11));
  EXPECT_EQ(hooks.stats().failed_attempts.load(), 1u);
  EXPECT_EQ(hooks.stats().endpoints.load(), 1u);
  hooks.stop();
}

TEST(WebhookBounds, CoalescedOddsHaveABound) {
  Published<api::KeyStore> keys(api::KeyStore::parse(hook_key(R"("odds_update")")));
  Webhooks hooks(slow_options(), keys);
  hooks.start();
  Engine e;
  constexpr int kEvents = 40;
  for (int i = 1; i <= kEvents; ++i) {
    e.apply(market(i, std::to_string(i), 1001, {{"s", 0, {{2001, 150, 0}}}}));
    hooks.on_batch(e.commit());
    if (i == 1) {
      wait_for([&] { return hooks.stats().failed_attempts.load() == 1; });
      ASSERT_EQ(hooks.stats().failed_attempts.load(), 1u);
    }
  }
  // 39 events' odds behind the one held: ten coalesced slots, 29 dropped.
  wait_for([&] { return hooks.stats().dropped.load() >= kEvents - 11; });
  EXPECT_EQ(hooks.stats().dropped.load(), static_cast<uint64_t>(kEvents - 11));
  EXPECT_EQ(hooks.stats().coalesced.load(), 0u);  // forty events: nothing to coalesce
  hooks.stop();
}

TEST(WebhookBounds, EndpointOfARemovedKeyIsShutDown) {
  Published<api::KeyStore> keys(api::KeyStore::parse(hook_key(R"("event_ended")")));
  Webhooks hooks(slow_options(), keys);
  hooks.start();
  Engine e;
  e.apply(test::rec(R"({"at":1,"op":"score","id":"1","home":1,"away":0,"status":"ended"})"));
  hooks.on_batch(e.commit());
  wait_for([&] { return hooks.stats().endpoints.load() == 1; });
  ASSERT_EQ(hooks.stats().endpoints.load(), 1u);
  keys.publish(api::KeyStore::parse(R"({"keys":[{"key":"k"}]})"));  // reloaded without the webhook
  e.apply(test::rec(R"({"at":2,"op":"score","id":"2","home":1,"away":0,"status":"ended"})"));
  hooks.on_batch(e.commit());
  wait_for([&] { return hooks.stats().endpoints.load() == 0; });
  EXPECT_EQ(hooks.stats().endpoints.load(), 0u);
  hooks.stop();
}

// No key with a webhook: the dispatcher is handed no batch (its thread is
// not woken per batch). A reload that adds one: batches are taken again,
// and the first end made from a batch alone is announced once.
TEST(WebhookBounds, NoBatchIsTakenWhileNoKeyHasAWebhook) {
  Published<api::KeyStore> keys(api::KeyStore::parse(R"({"keys":[{"key":"k"}]})"));
  Webhooks hooks(slow_options(), keys);
  hooks.start();
  Engine e;
  for (int i = 1; i <= 5; ++i) {
    e.apply(market(i, std::to_string(i), 1001, {{"s", 0, {{2001, 150, 0}}}}));
    hooks.on_batch(e.commit());
  }
  EXPECT_EQ(hooks.batches_taken(), 0u);
  keys.publish(api::KeyStore::parse(hook_key(R"("event_ended")")));
  e.apply(test::rec(R"({"at":6,"op":"score","id":"1","home":1,"away":0,"status":"ended"})"));
  hooks.on_batch(e.commit());
  EXPECT_EQ(hooks.batches_taken(), 1u);
  wait_for([&] { return hooks.stats().failed_attempts.load() == 1; });
  EXPECT_EQ(hooks.stats().failed_attempts.load(), 1u);  // the event_ended, sent (to a closed port)
  hooks.stop();
}

}  // namespace
}  // namespace oddsrelay::relay
