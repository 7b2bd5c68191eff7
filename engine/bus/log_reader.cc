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

void decode_log_message(natsMsg* m, LogMessage& out) {
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
  so.Config.DeliverPolicy = js_DeliverByStartSequence;
  so.Config.OptStartSeq = from;
  // What nats.c's ordered consumer asks for, without its recreation: one
  // replica in memory, nothing acknowledged or redelivered, and flow control
  // so that a catch-up paces the server instead of overflowing the library.
  so.Config.AckPolicy = js_AckNone;
  so.Config.MaxDeliver = 1;
  so.Config.MemoryStorage = true;
  so.Config.Replicas = 1;
  so.Config.FlowControl = true;
  so.Config.Heartbeat = int64_t{1'000'000'000};  // flow control needs them
  // Placing a consumer takes milliseconds, unless the cluster has no
  // metadata leader (an election): the caller then reads on by sequence,
  // so this gives up soon rather than stand still.
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = 500;
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
  // Room for a burst of catch-up (messages hold up to 256 KiB); should the
  // library ever drop one, next() says so.
  natsSubscription_SetPendingLimits(sub_, 1 << 16, 512 << 20);
  nc_ = link.nc();
  expect_ = 0;
  return true;
}

LogReader::Next LogReader::next(LogMessage& out, int timeout_ms, std::string& err) {
  natsMsg* m = nullptr;
  natsStatus s = natsSubscription_NextMsg(&m, sub_, timeout_ms);
  if (s == NATS_TIMEOUT) return Next::Timeout;
  if (s == NATS_SLOW_CONSUMER) return err = "the library dropped messages (slow reader)", Next::Failed;
  if (s != NATS_OK) return err = nats_error("next log message", s), Next::Failed;
  jsMsgMetaData* meta = nullptr;
  out.stream_seq = out.pending = 0;
  if (natsMsg_GetMetaData(&meta, m) == NATS_OK) {
    out.stream_seq = meta->Sequence.Stream;
    out.pending = meta->NumPending;
    jsMsgMetaData_Destroy(meta);
  }
  // The first message may lie past `from` (the stream no longer holds it:
  // the position check finds that hole); after it, none may be missing.
  if (expect_ && out.stream_seq > expect_) {
    natsMsg_Destroy(m);
    return err = "stream seq " + std::to_string(out.stream_seq) + " came after " + std::to_string(expect_ - 1) +
                 " (messages dropped)",
           Next::Failed;
  }
  if (out.stream_seq >= expect_) expect_ = out.stream_seq + 1;
  decode_log_message(m, out);
  natsMsg_Destroy(m);
  return Next::Msg;
}

void LogReader::close() {
  if (sub_) {
    // Unsubscribed first: the read loop drops what still comes for it. The
    // flush returns once the server's answer to a ping, sent after every
    // message it had for this subscription, has been read: the read loop is
    // done with it, and only then is it freed (see the header). Should the
    // flush fail (the connection is down) it is left allocated: a few
    // hundred bytes, rather than a crash.
    natsSubscription_Unsubscribe(sub_);
    if (natsConnection_FlushTimeout(nc_, 1000) == NATS_OK) natsSubscription_Destroy(sub_);
  }
  sub_ = nullptr;
  if (js_) jsCtx_Destroy(js_);
  js_ = nullptr;
}

}  // namespace oddsrelay::bus
