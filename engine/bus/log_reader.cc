#include "engine/bus/log_reader.h"

namespace oddsrelay::bus {

Fit fit(const LogMessage& m, const std::string& epoch, uint64_t seq) {
  if (m.epoch.empty() || m.records == 0 || m.records > m.last) return Fit::Bad;
  if (m.epoch != epoch) return Fit::OtherLog;
  if (m.last <= seq) return Fit::Old;
  if (m.last - m.records + 1 != seq + 1) return Fit::Gap;
  return Fit::Next;
}

const char* fit_name(Fit f) {
  switch (f) {
    case Fit::Next:
      return "next";
    case Fit::Old:
      return "old";
    case Fit::Gap:
      return "gap";
    case Fit::OtherLog:
      return "other log";
    case Fit::Bad:
      return "bad message";
  }
  return "?";
}

Got read_log_message(NatsLink& link, uint64_t seq, LogMessage& out, std::string& err) {
  StoredMsg m;
  Got g = link.get_msg(link.url().stream, seq, m, err);
  if (g != Got::Ok) return g;
  out.stream_seq = seq;
  out.pending = 0;
  out.data = std::move(m.data);
  out.records = count_lines(out.data);
  if (!parse_msg_id(m.msg_id, out.epoch, out.last)) {
    out.epoch.clear();
    out.last = 0;
  }
  return Got::Ok;
}

bool LogReader::open(NatsLink& link, uint64_t from, std::string& err) {
  close();
  const std::string stream = link.url().stream, subject = log_subject(stream);
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = stream.c_str();
  so.Ordered = true;
  so.Config.DeliverPolicy = js_DeliverByStartSequence;
  so.Config.OptStartSeq = from;
  // The consumer is R1 and lives on one server: heartbeats every second let
  // nats.c notice within two that it went with its server, and recreate it.
  so.Config.Heartbeat = int64_t{1'000'000'000};
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = 1000;
  natsStatus s = natsConnection_JetStream(&js_, link.nc(), &jo);
  if (s != NATS_OK) return err = nats_error("JetStream context", s), false;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  s = js_SubscribeSync(&sub_, js_, subject.c_str(), nullptr, &so, &jerr);
  if (s != NATS_OK) {
    sub_ = nullptr;
    jsCtx_Destroy(js_);
    js_ = nullptr;
    return err = nats_error(("subscribe " + subject).c_str(), s, jerr), false;
  }
  // Room for a burst of catch-up (messages hold up to 256 KiB): the ordered
  // consumer resets itself if the library ever drops one.
  natsSubscription_SetPendingLimits(sub_, 1 << 16, 512 << 20);
  return true;
}

LogReader::Next LogReader::next(LogMessage& out, int timeout_ms, std::string& err) {
  natsMsg* m = nullptr;
  natsStatus s = natsSubscription_NextMsg(&m, sub_, timeout_ms);
  if (s == NATS_TIMEOUT) return Next::Timeout;
  // A mismatch or missed heartbeat is the ordered consumer resetting itself.
  if (s == NATS_MISMATCH || s == NATS_MISSED_HEARTBEAT || s == NATS_SLOW_CONSUMER) return Next::Timeout;
  if (s != NATS_OK) return err = nats_error("next log message", s), Next::Failed;
  jsMsgMetaData* meta = nullptr;
  out.stream_seq = out.pending = 0;
  if (natsMsg_GetMetaData(&meta, m) == NATS_OK) {
    out.stream_seq = meta->Sequence.Stream;
    out.pending = meta->NumPending;
    jsMsgMetaData_Destroy(meta);
  }
  const char* id = nullptr;
  out.epoch.clear();
  out.last = 0;
  if (natsMsgHeader_Get(m, kMsgIdHeader, &id) != NATS_OK || !id || !parse_msg_id(id, out.epoch, out.last)) {
    out.epoch.clear();
    out.last = 0;
  }
  const char* d = natsMsg_GetData(m);
  out.data.assign(d ? d : "", static_cast<size_t>(natsMsg_GetDataLength(m)));
  out.records = count_lines(out.data);
  natsMsg_Destroy(m);
  return Next::Msg;
}

void LogReader::close() {
  // Destroy alone unsubscribes without deleting the consumer (see the header).
  if (sub_) natsSubscription_Destroy(sub_);
  sub_ = nullptr;
  if (js_) jsCtx_Destroy(js_);
  js_ = nullptr;
}

}  // namespace oddsrelay::bus
