#include "engine/bus/nats_link.h"

#include <chrono>
#include <random>
#include <thread>

namespace oddsrelay::bus {

std::string nats_error(const char* what, natsStatus s, jsErrCode jerr) {
  std::string out = what;
  out += ": ";
  const char* last = nats_GetLastError(nullptr);
  out += last && *last ? last : natsStatus_GetText(s);
  if (jerr != 0) out += " (JetStream error " + std::to_string(static_cast<int>(jerr)) + ")";
  return out;
}

void NatsLink::on_connected(natsConnection*, void* self) {
  static_cast<NatsLink*>(self)->connected_.store(true, std::memory_order_release);
}

void NatsLink::on_disconnected(natsConnection*, void* self) {
  auto* l = static_cast<NatsLink*>(self);
  if (l->connected_.exchange(false, std::memory_order_acq_rel)) l->disconnects_.fetch_add(1);
}

void NatsLink::on_reconnected(natsConnection*, void* self) {
  auto* l = static_cast<NatsLink*>(self);
  l->reconnects_.fetch_add(1);
  l->connected_.store(true, std::memory_order_release);
}

// 100 ms doubling to 2 s, with up to 20% jitter, so that many edges do not
// hit a restarted server in step.
int64_t NatsLink::reconnect_delay(natsConnection*, int attempts, void*) {
  static thread_local std::minstd_rand rng(std::random_device{}());
  int64_t d = int64_t{100} << std::min(attempts, 5);
  d = std::min<int64_t>(d, 2000);
  return d + static_cast<int64_t>(rng() % static_cast<unsigned>(d / 5 + 1));
}

bool NatsLink::open(const BusUrl& url, const std::string& name, std::string& err) {
  url_ = url;
  const std::string server = url.server();
  natsStatus s = natsOptions_Create(&opts_);
  if (s == NATS_OK) s = natsOptions_SetURL(opts_, server.c_str());
  if (s == NATS_OK) s = natsOptions_SetName(opts_, name.c_str());
  if (s == NATS_OK) s = natsOptions_SetMaxReconnect(opts_, -1);
  if (s == NATS_OK) s = natsOptions_SetCustomReconnectDelay(opts_, reconnect_delay, nullptr);
  if (s == NATS_OK) s = natsOptions_SetPingInterval(opts_, 2000);  // notice a dead peer in seconds
  if (s == NATS_OK) s = natsOptions_SetMaxPingsOut(opts_, 3);
  if (s == NATS_OK) s = natsOptions_SetTimeout(opts_, 2000);
  if (s == NATS_OK) s = natsOptions_SetSendAsap(opts_, true);  // latency: no flusher hop
  if (s == NATS_OK) s = natsOptions_SetDisconnectedCB(opts_, on_disconnected, this);
  if (s == NATS_OK) s = natsOptions_SetReconnectedCB(opts_, on_reconnected, this);
  if (s == NATS_OK) s = natsOptions_SetRetryOnFailedConnect(opts_, true, on_connected, this);
  if (s != NATS_OK) return err = nats_error("nats options", s), false;
  s = natsConnection_Connect(&nc_, opts_);
  if (s == NATS_OK)
    connected_.store(true, std::memory_order_release);
  else if (s != NATS_NOT_YET_CONNECTED)
    return err = nats_error(("connect " + server).c_str(), s), false;
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = 5000;
  s = natsConnection_JetStream(&js_, nc_, &jo);
  if (s != NATS_OK) return err = nats_error("JetStream context", s), false;
  return true;
}

bool NatsLink::wait_connected(int timeout_ms) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!connected()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

void NatsLink::close() {
  if (js_) jsCtx_Destroy(js_);
  js_ = nullptr;
  if (nc_) {
    natsConnection_Close(nc_);
    natsConnection_Destroy(nc_);
  }
  nc_ = nullptr;
  if (opts_) natsOptions_Destroy(opts_);
  opts_ = nullptr;
  connected_.store(false);
}

Got NatsLink::stream_state(const std::string& stream, StreamState& out, std::string& err) {
  jsStreamInfo* si = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_GetStreamInfo(&si, js_, stream.c_str(), nullptr, &jerr);
  if (s == NATS_NOT_FOUND || jerr == JSStreamNotFoundErr) return Got::Missing;
  if (s != NATS_OK) return err = nats_error(("stream info " + stream).c_str(), s, jerr), Got::Failed;
  out.msgs = si->State.Msgs;
  out.bytes = si->State.Bytes;
  out.first_seq = si->State.FirstSeq;
  out.last_seq = si->State.LastSeq;
  jsStreamInfo_Destroy(si);
  return Got::Ok;
}

namespace {

bool add_stream(jsCtx* js, jsStreamConfig& cfg, std::string& err) {
  jsStreamInfo* si = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_AddStream(&si, js, &cfg, nullptr, &jerr);
  if (si) jsStreamInfo_Destroy(si);
  // Another node may have made it in between: the same config is no error.
  if (s != NATS_OK && jerr != JSStreamNameExistErr)
    return err = nats_error((std::string("create stream ") + cfg.Name).c_str(), s, jerr), false;
  return true;
}

}  // namespace

bool NatsLink::ensure_streams(const Retention& r, std::string& err) {
  StreamState st;
  const std::string log = url_.stream, logsub = log_subject(log);
  Got g = stream_state(log, st, err);
  if (g == Got::Failed) return false;
  if (g == Got::Missing) {
    jsStreamConfig cfg;
    jsStreamConfig_Init(&cfg);
    const char* subjects[] = {logsub.c_str()};
    cfg.Name = log.c_str();
    cfg.Description = "oddsrelay log: feed-format records, Nats-Msg-Id <epoch>:<position>";
    cfg.Subjects = subjects;
    cfg.SubjectsLen = 1;
    cfg.Storage = js_FileStorage;
    cfg.Retention = js_LimitsPolicy;
    cfg.Discard = js_DiscardOld;
    cfg.MaxAge = r.max_age_s * 1'000'000'000;  // nanoseconds
    cfg.MaxBytes = r.max_bytes;
    cfg.Duplicates = int64_t{120} * 1'000'000'000;  // the dedup window for Nats-Msg-Id
    if (!add_stream(js_, cfg, err)) return false;
  }
  const std::string snap = snapshot_stream(log), snapsub = snapshot_subjects(log);
  g = stream_state(snap, st, err);
  if (g == Got::Failed) return false;
  if (g == Got::Missing) {
    jsStreamConfig cfg;
    jsStreamConfig_Init(&cfg);
    const char* subjects[] = {snapsub.c_str()};
    cfg.Name = snap.c_str();
    cfg.Description = "oddsrelay snapshots: chunks of the state at a log position, and the newest head";
    cfg.Subjects = subjects;
    cfg.SubjectsLen = 1;
    cfg.Storage = js_FileStorage;
    cfg.Retention = js_LimitsPolicy;
    cfg.Discard = js_DiscardOld;
    cfg.AllowDirect = false;
    if (!add_stream(js_, cfg, err)) return false;
  }
  return true;
}

namespace {

Got read_stored(natsStatus s, jsErrCode jerr, natsMsg* m, uint64_t seq, StoredMsg& out, std::string& err,
                const std::string& what) {
  if (s == NATS_NOT_FOUND || jerr == JSNoMessageFoundErr || jerr == JSStreamNotFoundErr) return Got::Missing;
  if (s != NATS_OK) return err = nats_error(what.c_str(), s, jerr), Got::Failed;
  out.seq = seq ? seq : natsMsg_GetSequence(m);
  out.subject = natsMsg_GetSubject(m) ? natsMsg_GetSubject(m) : "";
  const char* v = nullptr;
  out.msg_id = natsMsgHeader_Get(m, kMsgIdHeader, &v) == NATS_OK && v ? v : "";
  v = nullptr;
  out.chunk = natsMsgHeader_Get(m, kChunkHeader, &v) == NATS_OK && v ? v : "";
  const char* d = natsMsg_GetData(m);
  out.data.assign(d ? d : "", static_cast<size_t>(natsMsg_GetDataLength(m)));
  natsMsg_Destroy(m);
  return Got::Ok;
}

}  // namespace

Got NatsLink::get_msg(const std::string& stream, uint64_t seq, StoredMsg& out, std::string& err) {
  natsMsg* m = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_GetMsg(&m, js_, stream.c_str(), seq, nullptr, &jerr);
  return read_stored(s, jerr, m, seq, out, err, "get " + stream + " #" + std::to_string(seq));
}

Got NatsLink::get_last(const std::string& stream, const std::string& subject, StoredMsg& out, std::string& err) {
  natsMsg* m = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_GetLastMsg(&m, js_, stream.c_str(), subject.c_str(), nullptr, &jerr);
  return read_stored(s, jerr, m, 0, out, err, "get last " + subject);
}

bool NatsLink::purge_below(const std::string& stream, uint64_t seq, std::string& err) {
  if (seq <= 1) return true;
  jsOptions o;
  jsOptions_Init(&o);
  o.Stream.Purge.Sequence = seq;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_PurgeStream(js_, stream.c_str(), &o, &jerr);
  if (s != NATS_OK) return err = nats_error(("purge " + stream).c_str(), s, jerr), false;
  return true;
}

}  // namespace oddsrelay::bus
