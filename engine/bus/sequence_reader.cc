#include "engine/bus/sequence_reader.h"

#include <chrono>
#include <cstdlib>
#include <cstring>

namespace oddsrelay::bus {

namespace {

// A batch's answers must all come within this: a replica answers from its
// store in well under a millisecond, so a batch that takes longer lost a
// request (its server went) and is asked again from where it stopped.
constexpr int kBatchWaitMs = 1000;

// The index of a reply to round `round`, from its subject
// <inbox>.<round>.<index>; false for any other subject (an earlier round's).
bool reply_index(const char* subject, const std::string& inbox, uint64_t round, size_t& index) {
  if (!subject || std::strncmp(subject, inbox.data(), inbox.size()) != 0 || subject[inbox.size()] != '.') return false;
  char* end = nullptr;
  const char* p = subject + inbox.size() + 1;
  if (std::strtoull(p, &end, 10) != round || *end != '.') return false;
  index = std::strtoull(end + 1, &end, 10);
  return *end == '\0';
}

}  // namespace

bool SequenceReader::subscribe(NatsLink& link, std::string& err) {
  natsInbox* inbox = nullptr;
  natsStatus s = natsInbox_Create(&inbox);
  if (s != NATS_OK) return err = nats_error("inbox", s), false;
  inbox_ = inbox;
  natsInbox_Destroy(inbox);
  s = natsConnection_SubscribeSync(&sub_, link.nc(), (inbox_ + ".>").c_str());
  if (s != NATS_OK) {
    sub_ = nullptr;
    return err = nats_error("subscribe the direct-get inbox", s), false;
  }
  nc_ = link.nc();
  return true;
}

Got SequenceReader::read(NatsLink& link, uint64_t from, size_t max, std::vector<LogMessage>& out, std::string& err,
                         bool& unsupported) {
  out.clear();
  unsupported = false;
  if (!sub_ && !subscribe(link, err)) return Got::Failed;
  const uint64_t round = ++round_;
  const std::string subject = "$JS.API.DIRECT.GET." + link.url().stream;
  std::string reply, body;
  for (size_t i = 0; i < max; ++i) {
    reply = inbox_ + "." + std::to_string(round) + "." + std::to_string(i);
    body = "{\"seq\":" + std::to_string(from + i) + "}";
    natsStatus s =
        natsConnection_PublishRequest(nc_, subject.c_str(), reply.c_str(), body.data(), static_cast<int>(body.size()));
    if (s != NATS_OK) return err = nats_error("direct get", s), Got::Failed;
  }
  // Answers may come in any order (each replica answers its own share):
  // kept by index, and the batch is the run of found messages from `from`.
  std::vector<LogMessage> got(max);
  std::vector<char> state(max, 0);  // 0 waiting, 1 found, 2 past the end
  size_t answered = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBatchWaitMs);
  while (answered < max) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()).count();
    if (left <= 0) break;
    natsMsg* m = nullptr;
    natsStatus s = natsSubscription_NextMsg(&m, sub_, left);
    if (s == NATS_TIMEOUT) break;
    if (s != NATS_OK) return err = nats_error("direct get answer", s), Got::Failed;
    size_t i = 0;
    if (!reply_index(natsMsg_GetSubject(m), inbox_, round, i) || i >= max || state[i]) {
      natsMsg_Destroy(m);
      continue;
    }
    ++answered;
    if (natsMsg_IsNoResponders(m)) {
      natsMsg_Destroy(m);
      unsupported = true;
      return err = "the stream takes no direct gets (made without AllowDirect)", Got::Failed;
    }
    const char* v = nullptr;
    if (natsMsgHeader_Get(m, "Status", &v) == NATS_OK && v) {
      // 404: past this replica's store. Anything else ends the batch there.
      state[i] = 2;
      natsMsg_Destroy(m);
      continue;
    }
    LogMessage& lm = got[i];
    lm.stream_seq = from + i;
    v = nullptr;
    if (natsMsgHeader_Get(m, "Nats-Sequence", &v) == NATS_OK && v && std::strtoull(v, nullptr, 10) != from + i) {
      state[i] = 2;  // not the message asked for: treat as the end
      natsMsg_Destroy(m);
      continue;
    }
    decode_log_message(m, lm);
    state[i] = 1;
    natsMsg_Destroy(m);
  }
  size_t n = 0;
  while (n < max && state[n] == 1) ++n;
  for (size_t i = 0; i < n; ++i) out.push_back(std::move(got[i]));
  if (n > 0) return Got::Ok;
  if (state[0] == 2) return Got::Missing;
  // Nothing answered at all: a stream made without AllowDirect has no
  // direct-get subscription, but the server's JetStream API takes the
  // subject (it matches $JS.API.>) and drops it, so no "no responders"
  // comes back. The caller asks the leader to tell that from a bus in
  // trouble.
  unsupported = answered == 0;
  return err = "direct get #" + std::to_string(from) + ": no answer within " + std::to_string(kBatchWaitMs) + " ms",
         Got::Failed;
}

void SequenceReader::close() {
  if (sub_) {
    natsSubscription_Unsubscribe(sub_);
    if (natsConnection_FlushTimeout(nc_, 1000) == NATS_OK) natsSubscription_Destroy(sub_);
  }
  sub_ = nullptr;
}

}  // namespace oddsrelay::bus
